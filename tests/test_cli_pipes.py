"""A reader who stops reading: ``labkit check | head -c 10`` exits quietly (issue 43: BrokenPipeError
in 18 of 20 tries), every time."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_a_closed_pipe_ends_the_listing_quietly():
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-m", "labkit", "check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert len(child.stdout.read(10)) == 10
        child.stdout.close()  # what `head -c 10` does once it has its ten bytes
        status, stderr = child.wait(timeout=60), child.stderr.read().decode()
        assert (status, stderr) == (0, ""), stderr
