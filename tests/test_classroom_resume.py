"""``python -m classroom grade`` killed mid-run (SIGKILL) and run again gives the CSV of an uninterrupted run.

Each student's result is written as they finish (``<out>.state/``); the rerun skips the students
already written and grades only the others (its own module, so pytest-xdist runs it beside the others).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.grading import key_files, make_class
from classroom import report

REPO = Path(__file__).resolve().parents[1]
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def _grade(handins: Path, out: Path, *extra: str, wait: bool = True):
    command = [sys.executable, "-m", "classroom", "grade", str(handins), "--out", str(out), "--workers", "2", *extra]
    if not wait:
        return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def _needs_key():
    try:
        key_files()
    except FileNotFoundError:
        pytest.skip("the answer key is not in this copy")


@pytest.mark.slow
@needs_bwrap
def test_a_grader_killed_mid_run_resumes_to_the_same_csv(tmp_path):
    _needs_key()
    kinds = ("right", "wrong", "slow", "template", "right", "slow", "wrong", "slow")
    dealt = make_class(tmp_path / "handins", len(kinds), tuple(k if k != "slow" else "wrong" for k in kinds))
    for student, kind in zip(dealt, kinds, strict=True):
        if kind == "slow":  # a hand-in that takes a second to load: the kill lands mid-run
            (tmp_path / "handins" / f"{student}.py").write_text("import time\ntime.sleep(1)\njittered_backoff = 0\n")
    chosen = ("--exercise", "jittered_backoff", "--exercise", "largest_min_p")
    whole = tmp_path / "whole" / "grades.csv"
    whole.parent.mkdir()
    assert _grade(tmp_path / "handins", whole, *chosen).returncode == 0
    killed = tmp_path / "killed" / "grades.csv"
    killed.parent.mkdir()
    running = _grade(tmp_path / "handins", killed, *chosen, wait=False)
    state = report.outputs(killed)["state"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(state.glob("*.json"))) < 2:
        time.sleep(0.05)
    os.kill(running.pid, signal.SIGKILL)
    running.communicate()
    assert not killed.exists() and 2 <= len(list(state.glob("*.json"))) < len(kinds)
    again = _grade(tmp_path / "handins", killed, *chosen)
    assert again.returncode == 0, again.stderr
    assert f"/{len(kinds)}]" not in again.stdout  # the students already written were skipped
    assert killed.read_bytes() == whole.read_bytes()
