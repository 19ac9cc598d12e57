"""Grade one student's hand-in: one sandbox for all of their exercises, one result file when done.

The grader's process holds the checkers and the key (``answer_key``, when the folder is there) and
does every comparison; the hand-in only computes, answering calls over the wire.  A sandbox that dies,
hangs or overruns a limit costs that exercise a "could not check" and is started again for the next
(at most ``MAX_STARTS`` times a student, so a hand-in that loops in every function is bounded).  The
result is written atomically (a temporary file, ``fsync``, ``rename``, ``fsync`` of the folder), so a
kill loses at most the students in flight and a rerun skips every student already written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from classroom import handins
from classroom.runner import CouldNotCheck, Limits, Runner, Unusable

#: how often one student's sandbox is started before the rest of their exercises are given up
MAX_STARTS = 3
#: the result file's layout; a file of another version is graded again
VERSION = 1


@dataclass(frozen=True)
class Setup:
    """What every worker needs to grade a student (the same for the whole run)."""

    exercises: tuple[str, ...]
    state: Path
    limits: Limits = Limits(seconds=10.0, cpu_seconds=120, processes=32, open_files=256)
    sandboxed: bool = True
    key: str = field(init=False, default="")

    def __post_init__(self):
        joined = "\n".join(self.exercises) + f"\nversion {VERSION}"
        object.__setattr__(self, "key", hashlib.sha256(joined.encode()).hexdigest()[:16])


def specs() -> dict:
    """The exercise catalogue, with the teacher's key loaded when it is there (the hidden cases)."""
    with suppress(ImportError):
        import answer_key  # noqa: F401  (loads the key into the engine)
    import labkit.check as check

    return check.exercises()


def result_path(setup: Setup, student: str) -> Path:
    return setup.state / f"{handins.safe_name(student)}.json"


def saved(setup: Setup, handin: handins.HandIn) -> dict | None:
    """The result file of this very hand-in under this very setup, or None (a rerun grades it again)."""
    from labkit.core.strictjson import read_json_file

    path = result_path(setup, handin.student)
    try:
        data = read_json_file(path)
    except (OSError, ValueError):
        return None
    same = isinstance(data, dict) and data.get("student") == handin.student and data.get("digest") == handin.digest
    return data if same and data.get("setup") == setup.key and isinstance(data.get("rows"), list) else None


def grade_student(setup: Setup, handin: handins.HandIn) -> dict:
    """Grade every exercise of ``setup`` for ``handin``; write its result file; return the result."""
    catalogue = specs()
    staged, names = handins.stage(handin)
    try:
        rows = _grade_all(setup, catalogue, staged, names)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    if handin.problems:
        rows = [r | {"message": "; ".join([*handin.problems, r["message"]])[:1000]} for r in rows]
    result = {"version": VERSION, "setup": setup.key, "student": handin.student, "digest": handin.digest}
    result["rows"] = rows
    write_atomically(result_path(setup, handin.student), json.dumps(result, ensure_ascii=False, indent=1))
    return result


def _grade_all(setup: Setup, catalogue: dict, staged: str, names: list[str]) -> list[dict]:
    pending, rows, starts, why = list(setup.exercises), {}, 0, ""
    while pending and starts < MAX_STARTS:
        starts += 1
        loaded = False
        try:
            with _box(setup, staged, names) as box:
                loaded = True
                while pending:
                    rows[pending[0]] = _grade_exercise(catalogue[pending[0]], box, pending[0])
                    pending.pop(0)
        except CouldNotCheck as problem:
            why = str(problem)
            if not loaded:  # the files could not even be run: the same for every exercise
                rows |= {name: _row("could not check", why) for name in pending}
                pending = []
            elif pending:
                rows[pending.pop(0)] = _row("could not check", why)
    for name in pending:
        rows[name] = _row("could not check", f"not run: the hand-in's process was stopped {MAX_STARTS} times ({why})")
    return [{"exercise": name, **rows[name]} for name in setup.exercises]


def _box(setup: Setup, staged: str, names: list[str]):
    if setup.sandboxed:
        from classroom.sandbox import Sandbox

        return Sandbox(staged, names, setup.limits, wanted=setup.exercises)
    return Runner([os.path.join(staged, n) for n in names], setup.limits, wanted=setup.exercises)


def _row(status: str, message: str, feedback: str = "") -> dict:
    """A row; the hand-in's words (an exception's message) lose their control characters and are cut short."""
    message = " ".join(printable(message).split())[:1000]
    return {"status": status, "message": message, "feedback": printable(feedback, keep="\n")[:5000] or message}


def printable(text: str, keep: str = "") -> str:
    return "".join(c if c.isprintable() or c in keep else " " for c in str(text))


def _grade_exercise(spec, box: Runner, name: str) -> dict:
    """One exercise's row: its status, the verdict's first line, and what the student may read."""
    try:
        candidate = box.candidate(name)
    except Unusable as unusable:
        if unusable.status == "missing":
            return _row("missing", f"no file of this hand-in defines {name}")
        return _row(unusable.status, str(unusable))
    _fresh_attempts()
    try:
        result = spec(candidate)
    except CouldNotCheck:
        raise
    except Exception as problem:  # the checker choked on what the answer sent: never a pass
        return _row("could not check", f"the checker failed on this answer ({type(problem).__name__})")
    text = student_view(result)
    return _row(result.status, text.splitlines()[0] if text else result.status, text)


def student_view(result) -> str:
    """The verdict as the student may read it: level 1 (where it diverges, their value, the idea); a
    verdict never carries the expected value."""
    from labkit.check import feedback

    return feedback.as_text(replace(result, level=1), 1, prompt="ask your teacher for the rule")


def _fresh_attempts() -> None:
    """Each student's verdict starts at the first hint level (the engine counts wrong tries)."""
    from labkit.check.core import reset_attempts

    reset_attempts()


def write_atomically(path: Path, text: str) -> None:
    """``path`` holds ``text`` entirely or keeps what it held: temporary file, fsync, rename, fsync the folder."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
