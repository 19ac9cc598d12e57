"""``labkit grade FOLDER``: check a class's hand-ins and write one CSV (or JSON) row per student and exercise.

A hand-in is ``FOLDER/<student>.py`` or a folder ``FOLDER/<student>/`` of ``.py`` files.  Which file
answers which exercise is read from its top-level definitions without running it; each answer then
runs in the sandbox of ``labkit check NAME --file F`` (``labkit.cli.sandbox``), so a hand-in can
neither pass by exiting or patching the checker nor touch the teacher's files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from labkit.cli.check import fail, seconds

COLUMNS = ("student", "exercise", "status", "message")


def configure(parser) -> None:
    parser.add_argument("folder", type=Path, help="a folder of hand-ins: <student>.py files or <student>/ folders")
    parser.add_argument(
        "--exercise", action="append", metavar="NAME", help="grade this exercise (repeat; default: every one defined)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("grades.csv"),
        help="the CSV (or, named .json, JSON) to write (default grades.csv)",
    )
    parser.add_argument("--timeout", type=seconds, default=60.0, metavar="SECONDS", help="limit per answer, default 60")


def run(args) -> int:
    import labkit.check as check

    specs = check.exercises()
    if not args.folder.is_dir():
        return fail(f"FOLDER must be a folder of hand-ins, got {str(args.folder)!r}", "grade")
    unknown = sorted(set(args.exercise or ()) - set(specs))
    if unknown:
        return fail(f"--exercise names no exercise: {', '.join(unknown)} (`labkit check` lists them)", "grade")
    handins = hand_ins(args.folder)
    if not handins:
        return fail(f"{args.folder} holds no hand-in (<student>.py files or <student>/ folders of .py files)", "grade")
    rows = grade(handins, specs, args.exercise, args.timeout)
    with open(args.out, "w", newline="", encoding="utf-8") as out:
        if args.out.suffix == ".json":
            json.dump([dict(zip(COLUMNS, row, strict=True)) for row in rows], out, ensure_ascii=False, indent=1)
        else:
            csv.writer(out).writerows([COLUMNS, *rows])
    counts = {s: sum(r[2] == s for r in rows) for s in ("passed", "failed", "could not check", "missing")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    print(f"graded {len(handins)} hand-ins: {summary}; wrote {len(rows)} rows to {args.out}")
    return 0


def hand_ins(folder: Path) -> dict[str, list[Path]]:
    """Student → the ``.py`` files of their hand-in, sorted."""
    found = {}
    for entry in sorted(p for p in Path(folder).iterdir() if not p.name.startswith(".")):
        if entry.is_dir():
            found[entry.name] = sorted(entry.rglob("*.py"))
        elif entry.is_file() and entry.suffix == ".py":
            found[entry.stem] = [entry]
    return {student: files for student, files in found.items() if files}


def defined_names(path: Path) -> set[str]:
    """The names ``path`` binds at its top level (``def``, assignments, imports), read without running it
    (a file that does not parse defines nothing here; checking it reports the syntax error)."""
    from labkit.cli.lab import bound_names

    try:
        return bound_names(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return set()


def grade(handins: dict[str, list[Path]], specs: dict, exercises: list[str] | None, seconds: float) -> list[tuple]:
    """One row (student, exercise, status, message) per student and exercise."""
    from labkit.cli.check import check_file

    defined = {s: {f: defined_names(f) for f in files} for s, files in handins.items()}
    if exercises:
        chosen = list(dict.fromkeys(exercises))
    else:
        chosen = sorted({n for files in defined.values() for names in files.values() for n in names} & set(specs))
    rows = []
    for student, files in defined.items():
        for name in chosen:
            where = next((f for f, names in files.items() if name in names), None)
            if where is None:
                rows.append((student, name, "missing", f"no file of this hand-in defines {name}"))
                continue
            verdict = check_file(specs[name], where, name, seconds)
            rows.append((student, name, verdict.status, verdict.text))
    return rows
