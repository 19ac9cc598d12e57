"""``python -m classroom grade`` killed mid-run (SIGKILL) and run again gives the CSV of an uninterrupted run.

Each student's result is written as they finish (``<out>.state/``); the rerun skips the students
already written and grades only the others (its own module, so pytest-xdist runs it beside the others).
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from _helpers import grade_class, needs_bwrap, needs_key

from benchmarks.grading import make_class
from classroom import report


@pytest.mark.slow
@needs_bwrap
def test_a_grader_killed_mid_run_resumes_to_the_same_csv(tmp_path):
    needs_key()
    kinds = ("right", "wrong", "slow", "template", "right", "slow", "wrong", "slow")
    dealt = make_class(tmp_path / "handins", len(kinds), tuple(k if k != "slow" else "wrong" for k in kinds))
    for student, kind in zip(dealt, kinds, strict=True):
        if kind == "slow":  # a hand-in that takes a second to load: the kill lands mid-run
            (tmp_path / "handins" / f"{student}.py").write_text("import time\ntime.sleep(1)\njittered_backoff = 0\n")
    chosen = ("--exercise", "jittered_backoff", "--exercise", "largest_min_p")
    whole = tmp_path / "whole" / "grades.csv"
    whole.parent.mkdir()
    assert grade_class(tmp_path / "handins", whole, *chosen).returncode == 0
    killed = tmp_path / "killed" / "grades.csv"
    killed.parent.mkdir()
    running = grade_class(tmp_path / "handins", killed, *chosen, wait=False)
    state = report.outputs(killed)["state"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(state.glob("*.json"))) < 2:
        time.sleep(0.05)
    os.kill(running.pid, signal.SIGKILL)
    running.communicate()
    assert not killed.exists() and 2 <= len(list(state.glob("*.json"))) < len(kinds)
    again = grade_class(tmp_path / "handins", killed, *chosen)
    assert again.returncode == 0, again.stderr
    assert f"/{len(kinds)}]" not in again.stdout  # the students already written were skipped
    assert killed.read_bytes() == whole.read_bytes()
