"""``python -m classroom otter DEST``: an otter-grader autograder (``DEST/autograder.zip``) for the graded exercises.

For teachers who grade with otter-grader (``otter run``, its containers) or Gradescope.  The zip holds
one OK-format test per exercise, worth the exercise's points (the catalogue's, or ``--points``).  Each
test asks labkit's own checker, with the teacher's key loaded (hidden cases included), for the verdict
on the submission's value or function of that name (``classroom.otter_check.verdict``), so otter and
``python -m classroom grade`` agree on every exercise.  Otter runs the submission in its own process
without the bubblewrap sandbox of ``classroom grade``: isolation there is otter's (its containers).

The tests find ``labkit``, ``classroom`` and the key in this clone (its path is written into them),
which is what ``otter run`` on this machine needs; for Gradescope's image the clone must be added to
the image (``requirements.txt``/``setup.sh`` of the zip), which this command does not do.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from classroom import grade, grading

ROOT = Path(__file__).resolve().parents[1]


def configure(parser) -> None:
    parser.add_argument("dest", type=Path, help="a folder for autograder.zip (made if missing)")
    parser.add_argument("--exercise", action="append", metavar="NAME", help="this exercise only (repeat; default: all)")
    parser.add_argument("--points", type=Path, metavar="TOML", help="the teacher's points: `name = points` lines")


def run(args) -> int:
    catalogue = grading.specs()
    unknown = sorted(set(args.exercise or ()) - set(catalogue))
    if unknown:
        raise ValueError(f"--exercise names no exercise: {', '.join(unknown)} (`labkit check` lists them)")
    points = grade.exercise_points(catalogue, args.points)
    chosen = tuple(dict.fromkeys(args.exercise)) if args.exercise else grade.graded(points)
    if args.dest.exists() and not args.dest.is_dir():
        raise ValueError(f"DEST must be a folder, got {str(args.dest)!r}")
    args.dest.mkdir(parents=True, exist_ok=True)
    path = write_autograder(args.dest / "autograder.zip", {name: points[name] for name in chosen})
    print(f"wrote {path}: {len(chosen)} tests; grade a submission with: otter run -a {path} -o OUT answers.py")
    return 0


def test_file(name: str, points: float, root: Path = ROOT) -> str:
    """The OK-format test of exercise ``name``: one doctest case whose only expected output is "passed"."""
    code = (
        f">>> import sys; sys.path.insert(0, {str(root)!r})\n"
        f">>> from classroom.otter_check import verdict\n"
        f">>> verdict({name!r}, globals())\n'passed'"
    )
    case = {"code": code, "hidden": False, "locked": False}
    suite = {"type": "doctest", "scored": True, "setup": "", "teardown": "", "cases": [case]}
    test = {"name": name, "points": points, "suites": [suite]}
    return f"OK_FORMAT = True\n\ntest = {test!r}\n"


def write_autograder(path: Path, points: dict[str, float]) -> Path:
    """The zip ``otter run -a`` takes: the tests, an (empty) otter configuration and requirements."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("otter_config.json", json.dumps({"lang": "python"}))
        archive.writestr("requirements.txt", "")
        for name, worth in points.items():
            archive.writestr(f"tests/{name}.py", test_file(name, worth))
    return path
