"""What the teacher gets from the students' result files: the grades CSV, a score per student, a feedback file each.

Every file is written atomically.  A CSV cell never starts with ``= + - @``, a tab or a carriage
return (a spreadsheet would read it as a formula): such a cell gets a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from classroom.grading import write_atomically
from classroom.handins import safe_name

COLUMNS = ("student", "exercise", "status", "points", "max_points", "message")
STATUSES = ("passed", "failed", "not attempted", "missing", "does not parse", "could not check")
SCORE_COLUMNS = ("student", "score", "max_score", *STATUSES)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def outputs(out: Path) -> dict[str, Path]:
    """The files and folders beside ``out`` (``grades.csv``: ``grades.scores.csv``, ``grades.feedback/``,
    and ``grades.state/``, the students' result files a rerun resumes from)."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return {
        "grades": out,
        "scores": out.with_name(f"{stem}.scores{out.suffix or '.csv'}"),
        "feedback": out.with_name(f"{stem}.feedback"),
        "state": out.with_name(f"{stem}.state"),
    }


def safe_cell(value) -> str | float:
    """A cell a spreadsheet shows as text: numbers stay numbers, a text that looks like a formula gets a ``'``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def rows(results: list[dict], points: dict[str, float]) -> list[dict]:
    """One row per student and exercise, students in order, points from the current ``points``."""
    table = []
    for result in results:
        for row in result["rows"]:
            worth = float(points.get(row["exercise"], 1.0))
            earned = worth if row["status"] == "passed" else 0.0
            table.append(
                {"student": result["student"], "exercise": row["exercise"], "status": row["status"]}
                | {
                    "points": earned,
                    "max_points": worth,
                    "message": row["message"],
                }
            )
    return table


def scores(table: list[dict]) -> list[dict]:
    """One row per student: the score, the most they could score, how many exercises of each status."""
    by_student: dict[str, dict] = {}
    for row in table:
        entry = by_student.setdefault(row["student"], {"student": row["student"], "score": 0.0, "max_score": 0.0})
        entry["score"] += row["points"]
        entry["max_score"] += row["max_points"]
        entry[row["status"]] = entry.get(row["status"], 0) + 1
    return [{c: entry.get(c, 0) for c in SCORE_COLUMNS} for entry in by_student.values()]


def write_table(path: Path, table: list[dict], columns: tuple[str, ...]) -> None:
    """A CSV (or, for a ``.json`` path, a JSON list) of ``table``, written atomically."""
    if path.suffix == ".json":
        return write_atomically(path, json.dumps(table, ensure_ascii=False, indent=1) + "\n")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows([safe_cell(row[c]) for c in columns] for row in table)
    write_atomically(path, buffer.getvalue())


def write_feedback(folder: Path, results: list[dict], table: list[dict]) -> None:
    """``folder/<student>.md`` for each student: the score, then each exercise's verdict and hint (never the answer)."""
    folder.mkdir(exist_ok=True)
    totals = {s["student"]: s for s in scores(table)}
    for result in results:
        student = result["student"]
        total = totals[student]
        text = [f"# Feedback: {student}", "", f"Score: {_num(total['score'])} of {_num(total['max_score'])}", ""]
        worth = {r["exercise"]: r for r in table if r["student"] == student}
        for row in result["rows"]:
            mark = worth[row["exercise"]]
            text += [f"## {row['exercise']} — {row['status']} ({_num(mark['points'])} of {_num(mark['max_points'])})"]
            text += ["", "```text", row["feedback"].replace("```", "'''"), "```", ""]
        write_atomically(folder / f"{safe_name(student)}.md", "\n".join(text))


def _num(value: float) -> str:
    return f"{value:g}"


def write_all(out: Path, results: list[dict], points: dict[str, float]) -> list[dict]:
    """Every output of a run, from the students' results; returns the grades table."""
    paths = outputs(out)
    table = rows(results, points)
    write_table(paths["grades"], table, COLUMNS)
    write_table(paths["scores"], scores(table), SCORE_COLUMNS)
    write_feedback(paths["feedback"], results, table)
    return table
