"""``python -m classroom grade``: a generated class graded whole (CSV, scores, feedback), and the
teacher-facing details (points, safe cells, the output path, the wire's types)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from _helpers import grade_class, needs_bwrap, needs_key

from benchmarks.grading import make_class
from classroom import grade, report


def _rows(out: Path) -> list[dict]:
    return list(csv.DictReader(out.open(encoding="utf-8")))


@pytest.mark.slow
@needs_bwrap
def test_a_generated_class_gets_a_row_per_student_and_exercise_scores_and_feedback(tmp_path):
    needs_key()
    import labkit.check as check

    kinds = ("right", "partly", "wrong", "syntax", "empty", "template", "hostile")
    dealt = make_class(tmp_path / "handins", len(kinds), kinds)
    out = tmp_path / "out" / "grades.csv"
    out.parent.mkdir()
    done = grade_class(tmp_path / "handins", out, "--timeout", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    rows, exercises = _rows(out), grade.graded(grade.exercise_points(check.exercises(), None))
    assert len(rows) == len(kinds) * len(exercises)
    status = {kind: {r["status"] for r in rows if dealt[r["student"]] == kind} for kind in kinds}
    assert status["right"] == {"passed"} and status["template"] == {"not attempted"}
    assert status["syntax"] == {"does not parse"} and status["empty"] == {"missing"}
    assert status["partly"] == {"passed", "missing"} and "could not check" not in status["wrong"]
    assert all("line 1" in r["message"] for r in rows if dealt[r["student"]] == "syntax")
    scores = {r["student"]: r for r in csv.DictReader(report.outputs(out)["scores"].open(encoding="utf-8"))}
    right = next(s for s, k in dealt.items() if k == "right")
    assert float(scores[right]["score"]) == float(scores[right]["max_score"]) > 0
    feedback = sorted(report.outputs(out)["feedback"].glob("*.md"))
    assert len(feedback) == len(kinds)
    for path in feedback:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# Feedback: s0") and "Score:" in text
        assert not any(line.strip().startswith("expected") for line in text.splitlines()), path.name


def test_grade_refuses_bad_arguments_by_name(tmp_path, capsys):
    from classroom import main

    (tmp_path / "h").mkdir()
    assert main(["grade", str(tmp_path / "nowhere")]) == 2
    assert "HANDINS" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "h"), "--out", str(tmp_path / "g.txt")]) == 2
    assert "--out must name a .csv" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "h"), "--out", str(tmp_path / "h" / "g.csv")]) == 2
    assert "outside HANDINS" in capsys.readouterr().err
    os.mkfifo(tmp_path / "g.csv")
    assert main(["grade", str(tmp_path / "h"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "neither a file nor a folder" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "h"), "--out", str(tmp_path / "x.csv"), "--exercise", "nope"]) == 2
    assert "--exercise" in capsys.readouterr().err
    (tmp_path / "points.toml").write_text("nope = 3\n")
    assert (
        main(
            ["grade", str(tmp_path / "h"), "--out", str(tmp_path / "x.csv"), "--points", str(tmp_path / "points.toml")]
        )
        == 2
    )
    assert "--points names no exercise" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "h"), "--out", str(tmp_path / "x.csv")]) == 2
    assert "holds no hand-in" in capsys.readouterr().err


def test_points_come_from_the_catalogue_then_the_teachers_file(tmp_path):
    import labkit.check as check

    catalogue = check.exercises()
    (tmp_path / "points.toml").write_text("jittered_backoff = 3\n")
    points = grade.exercise_points(catalogue, tmp_path / "points.toml")
    assert points["jittered_backoff"] == 3.0
    assert all(points[n] == float(getattr(s, "points", 1.0)) for n, s in catalogue.items() if n != "jittered_backoff")


def test_no_cell_reads_as_a_formula():
    assert [report.safe_cell(t) for t in ("=1+2", "+1", "-x", "@SUM", "\tx", "\rx", "ok", 2.0)] == [
        "'=1+2",
        "'+1",
        "'-x",
        "'@SUM",
        "'\tx",
        "'\rx",
        "ok",
        2.0,
    ]


def test_an_answer_crosses_the_wire_with_its_type():
    """The engine compares by type; the wire must not turn the string "1" into a number, or ``...`` into anything."""
    from classroom.runner_wire import decode, encode

    for value in ("1", 1, 1.0, True, Ellipsis, (1, "1"), [1.5, None]):
        blobs: list[bytes] = []
        back = decode(encode(value, blobs, ref=None), blobs, deref=None)
        assert back == value and type(back) is type(value), (value, back)
