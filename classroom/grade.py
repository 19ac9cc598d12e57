"""``python -m classroom grade HANDINS --out grades.csv`` (``make grade HANDINS=… OUT=…``): grade a class.

Each student's hand-in runs in its own operating-system sandbox (``classroom.sandbox``), several
students at once (``--workers``, default: the number of cores).  Each student's result is written as
they finish, to ``<out>.state/``; the CSV, the scores (``<out>.scores.csv``) and the feedback files
(``<out>.feedback/``) are made from those files at the end.  A rerun skips every student whose result
is there and whose hand-in has not changed, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import os
import stat
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

from classroom import grading, handins, report


def configure(parser) -> None:
    parser.add_argument("handins", type=Path, help="a folder of hand-ins: <student>.py files or <student>/ folders")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the grades CSV (or .json), grades.csv")
    parser.add_argument("--exercise", action="append", metavar="NAME", help="grade this one (repeat; default: all)")
    parser.add_argument("--points", type=Path, metavar="TOML", help="the teacher's points: `name = points` lines")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="students graded at once (cores)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="limit per exercise (10)")
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade without the operating system's sandbox (only where none can be made; says what is unprotected)",
    )


def fail(message: str) -> int:
    print(f"classroom grade: {message}", file=sys.stderr)
    return 2


def run(args) -> int:
    problem = _argument_problem(args)
    if problem:
        return fail(problem)
    catalogue = grading.specs()
    unknown = sorted(set(args.exercise or ()) - set(catalogue))
    if unknown:
        return fail(f"--exercise names no exercise: {', '.join(unknown)} (`labkit check` lists them)")
    try:
        points = exercise_points(catalogue, args.points)
    except ValueError as exc:
        return fail(str(exc))
    chosen = tuple(dict.fromkeys(args.exercise)) if args.exercise else graded(points)
    found = handins.find(args.handins)
    if not found:
        return fail(f"HANDINS {str(args.handins)!r} holds no hand-in (<student>.py files or <student>/ folders)")
    sandboxed = not args.unsafe_no_sandbox
    if sandboxed and (why := _no_sandbox()):
        return fail(f"{why}. Refusing to run untrusted hand-ins; --unsafe-no-sandbox grades them anyway, and then")
    if not sandboxed:
        from classroom.sandbox import UNPROTECTED

        print(f"classroom grade: WARNING: {UNPROTECTED}", file=sys.stderr)
    paths = report.outputs(args.out)
    paths["state"].mkdir(exist_ok=True)
    setup = grading.Setup(chosen, paths["state"], sandboxed=sandboxed)
    setup = replace(setup, limits=replace(setup.limits, seconds=args.timeout))
    try:
        results, lost = _grade_class(setup, found, args.workers)
    except KeyboardInterrupt:
        saved = len(list(paths["state"].glob("*.json")))
        print(f"classroom grade: interrupted; {saved} results are saved in {paths['state']}/:", file=sys.stderr)
        print("run the same command again to grade the others", file=sys.stderr)
        return 130
    table = report.write_all(args.out, results, points)
    counts = {s: sum(r["status"] == s for r in table) for s in report.STATUSES}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    print(f"graded {len(results)} hand-ins: {said}; wrote {args.out}, {paths['scores']}, {paths['feedback']}/")
    if lost:
        return fail(f"{len(lost)} hand-ins were not graded ({', '.join(lost[:5])}…): run the same command again")
    return 0


def _argument_problem(args) -> str | None:
    """What is wrong with the arguments, checked before any work (and before any output is written)."""
    if not args.handins.is_dir():
        return f"HANDINS must be a folder of hand-ins, got {str(args.handins)!r}"
    if not 1 <= args.workers <= 256:
        return f"--workers must be between 1 and 256, got {args.workers}"
    if not 0 < args.timeout <= 3600:
        return f"--timeout must be a number of seconds in (0, 3600], got {args.timeout:g}"
    out = args.out
    if out.suffix not in (".csv", ".json"):
        return f"--out must name a .csv or .json file, got {str(out)!r}"
    if not out.parent.resolve().is_dir():
        return f"--out must be in an existing folder, got {str(out)!r}"
    for path in report.outputs(out).values():
        if path.is_symlink() or (path.exists() and not (stat.S_ISREG(path.lstat().st_mode) or path.is_dir())):
            return f"--out {str(out)!r}: {path.name} exists and is neither a file nor a folder (a link, a FIFO?)"
    inside = args.handins.resolve()
    if inside == out.parent.resolve() or inside in out.parent.resolve().parents:
        return f"--out must lie outside HANDINS, got {str(out)!r}"
    return None


def _no_sandbox() -> str | None:
    from classroom import sandbox

    return sandbox.unavailable()


def graded(points: dict[str, float]) -> tuple[str, ...]:
    """The exercises a class is graded on: every one with points (a prediction, a self-test, has none
    unless the teacher's file gives it some)."""
    return tuple(name for name, worth in points.items() if worth > 0)


def exercise_points(catalogue: dict, override: Path | None) -> dict[str, float]:
    """Points per exercise: the catalogue's (``Exercise.points``: 1, a prediction 0), then the teacher's file."""
    points = {name: float(spec.points) for name, spec in catalogue.items()}
    if override is None:
        return points
    try:
        given = tomllib.loads(override.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"--points must be a readable TOML file of `name = points` lines ({exc})") from None
    for name, value in given.items():
        if name not in catalogue:
            raise ValueError(f"--points names no exercise: {name!r} (`labkit check` lists them)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1000:
            raise ValueError(f"--points: {name} must be a number of points in [0, 1000], got {value!r}")
        points[name] = float(value)
    return points


def _die_with_grader() -> None:
    """A worker dies with the grader (a SIGKILL of the grader leaves no worker grading on), and so, through
    bwrap's ``--die-with-parent``, does its sandbox."""
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the grader died before the line above
        os._exit(1)


def _grade_class(setup: grading.Setup, found: dict, workers: int) -> tuple[list[dict], list[str]]:
    """Every student's result, in the order of their names: saved ones read back, the others graded in parallel."""
    read = {student: handins.read(student, files) for student, files in found.items()}
    results = {student: grading.saved(setup, handin) for student, handin in read.items()}
    todo = [handin for student, handin in read.items() if results[student] is None]
    handins.sweep_stale()
    if todo and setup.sandboxed:
        from classroom import sandbox

        sandbox.pids_cgroups()  # made once here, shared by the workers
    lost = []
    size = min(workers, max(len(todo), 1))
    with ProcessPoolExecutor(max_workers=size, mp_context=get_context("fork"), initializer=_die_with_grader) as pool:
        futures = {pool.submit(grading.grade_student, setup, handin): handin.student for handin in todo}
        try:
            _collect(futures, results, lost, len(setup.exercises))
        except KeyboardInterrupt:  # stop the workers now (their sandboxes die with them), not after the queue
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            raise
    return [r for r in results.values() if r is not None], lost


def _collect(futures: dict, results: dict, lost: list, exercises: int) -> None:
    """Each student's result as their worker finishes (a lost worker's students go to ``lost``)."""
    todo = len(futures)
    for done, future in enumerate(as_completed(futures), start=1):
        student = futures[future]
        try:
            results[student] = future.result()
        except (BrokenProcessPool, OSError) as problem:  # a worker lost (killed, out of memory)
            print(f"[{done}/{todo}] {student}: not graded ({type(problem).__name__}: {problem})", flush=True)
            lost.append(student)
            continue
        passed = sum(r["status"] == "passed" for r in results[student]["rows"])
        print(f"[{done}/{todo}] {student}: {passed} of {exercises} passed", flush=True)
