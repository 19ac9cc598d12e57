"""``python -m classroom otter``: the otter-grader autograder gives the points ``classroom grade`` gives.

otter-grader is the ``[class]`` extra (``pip install -e ".[class]"``: about 140 s and 550 MB in a fresh
environment on the CI machine), not part of ``.[dev]``: the run through ``otter run`` skips, saying
so, where it is not installed.  The zip's contents are checked everywhere.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from benchmarks.grading import key_file_of
from classroom import otter

REPO = Path(__file__).resolve().parents[1]


def test_the_autograder_holds_one_test_per_exercise_worth_its_points(tmp_path):
    path = otter.write_autograder(tmp_path / "autograder.zip", {"jittered_backoff": 3.0, "largest_min_p": 1.0})
    archive = zipfile.ZipFile(path)
    assert sorted(archive.namelist()) == [
        "otter_config.json",
        "requirements.txt",
        "tests/jittered_backoff.py",
        "tests/largest_min_p.py",
    ]
    namespace: dict = {}
    exec(archive.read("tests/jittered_backoff.py").decode(), namespace)
    assert namespace["OK_FORMAT"] is True and namespace["test"]["points"] == 3.0
    assert "verdict('jittered_backoff', globals())" in namespace["test"]["suites"][0]["cases"][0]["code"]


def test_otter_refuses_an_unknown_exercise(tmp_path, capsys):
    from classroom import main

    assert main(["otter", str(tmp_path), "--exercise", "nope"]) == 2
    assert "--exercise names no exercise" in capsys.readouterr().err


def _variants() -> tuple[Path, list[str]]:
    try:
        key = key_file_of("jittered_backoff")
    except FileNotFoundError:
        pytest.skip("the answer key is not in this copy")
    names = [n.name for n in ast.parse(key.read_text()).body if isinstance(n, ast.FunctionDef)]
    import labkit.check as check

    return key, [n for n in names if n in check.exercises()]


@pytest.mark.slow
# .ci/run installs the [class] extra and sets CLASSROOM_OTTER=required: there the run may not skip
@pytest.mark.skipif(
    importlib.util.find_spec("otter") is None and os.environ.get("CLASSROOM_OTTER") != "required",
    reason="otter-grader is not installed: .[class]",
)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_otter_run_gives_the_points_classroom_grade_gives(tmp_path):
    key, names = _variants()
    right = key.read_text()
    wrong = "\n".join(f"def {n}(*args):\n    return 0\n" for n in names)
    template = "\n".join(f"def {n}(*args):\n    raise NotImplementedError\n" for n in names)
    handins = tmp_path / "handins"
    handins.mkdir()
    for student, text in {"ada": right, "ben": wrong, "cal": template}.items():
        (handins / f"{student}.py").write_text(text)
    chosen = [a for n in names for a in ("--exercise", n)]
    out = tmp_path / "grades.csv"
    done = subprocess.run(
        [sys.executable, "-m", "classroom", "grade", str(handins), "--out", str(out), *chosen],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    points = {(r["student"], r["exercise"]): float(r["points"]) for r in csv.DictReader(out.open(encoding="utf-8"))}
    made = subprocess.run([sys.executable, "-m", "classroom", "otter", str(tmp_path / "ag"), *chosen], cwd=REPO)
    assert made.returncode == 0
    otter_bin = Path(sys.executable).with_name("otter")
    for student in ("ada", "ben", "cal"):  # the right answers, wrong ones, the template
        results = tmp_path / "otter" / student
        results.mkdir(parents=True)
        ran = subprocess.run(
            [str(otter_bin), "run", "-a", str(tmp_path / "ag" / "autograder.zip"), "-o", str(results)]
            + [str(handins / f"{student}.py")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        scored = json.loads((results / "results.json").read_text())
        by_otter = {(student, t["name"]): t["score"] for t in scored["tests"] if t["name"] in names}
        assert by_otter == {k: v for k, v in points.items() if k[0] == student}, scored["tests"]
    assert sum(v for (s, _), v in points.items() if s == "ada") == len(names)
    assert sum(v for (s, _), v in points.items() if s != "ada") == 0
