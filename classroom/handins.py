"""A folder of hand-ins, read by the grader as bytes only (never parsed or run here).

A hand-in is ``HANDINS/<student>.py`` or a folder ``HANDINS/<student>/`` of ``.py`` files.  Every file
is opened without following links and without blocking (a FIFO named ``x.py`` cannot hang the grader),
must be a regular file, and is read up to a size limit; the bytes are what the sandbox sees (a copy
staged in a private folder), and their digest tells a rerun whether the hand-in changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: the largest file of a hand-in, and the most files one may hold
MAX_FILE, MAX_FILES = 1 << 20, 50


@dataclass
class HandIn:
    """One student's files: relative name → bytes; ``problems`` says what could not be read."""

    student: str
    files: dict[str, bytes] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for name, data in sorted(self.files.items()):
            h.update(f"{len(name)}:{name}:{len(data)}:".encode() + data)
        h.update("\n".join(self.problems).encode())
        return h.hexdigest()


def find(folder: Path) -> dict[str, list[tuple[str, Path]]]:
    """Student → [(relative name, path)] of their ``.py`` files, sorted; hidden entries skipped."""
    found: dict[str, list[tuple[str, Path]]] = {}
    for entry in sorted(Path(folder).iterdir()):
        if entry.name.startswith("."):
            continue
        mode = entry.lstat().st_mode
        if stat.S_ISDIR(mode):
            files = sorted(_python_files(entry))
            found[entry.name] = [(p.relative_to(entry).as_posix(), p) for p in files[: MAX_FILES + 1]]
        elif entry.suffix == ".py":
            found[entry.stem] = [(entry.name, entry)]
    return {student: files for student, files in found.items() if files}


def _python_files(folder: Path):
    for root, dirs, names in os.walk(folder):  # never into a linked folder
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        yield from (Path(root) / n for n in names if n.endswith(".py") and not n.startswith("."))


def read(student: str, files: list[tuple[str, Path]]) -> HandIn:
    """The bytes of a student's files, each bounded; what cannot be read becomes a problem, not an error."""
    handin = HandIn(student)
    if len(files) > MAX_FILES:
        handin.problems.append(f"more than {MAX_FILES} .py files; the first {MAX_FILES} were graded")
    for name, path in files[:MAX_FILES]:
        try:
            handin.files[name] = _read_regular(path)
        except (OSError, ValueError) as exc:
            handin.problems.append(f"{name} could not be read: {exc}")
    return handin


def _read_regular(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("it is not a regular file")
        data = bytearray()
        while len(data) <= MAX_FILE:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) > MAX_FILE:
        raise ValueError(f"it is larger than {MAX_FILE >> 10} kB")
    return bytes(data)


#: staged hand-ins: ``classroom-handin-<grader's pid>-…`` in the temporary folder
STAGED = "classroom-handin-"


def stage(handin: HandIn) -> tuple[str, list[str]]:
    """Write the hand-in's bytes into a new private folder: (folder, relative names) for the sandbox."""
    folder = tempfile.mkdtemp(prefix=f"{STAGED}{os.getppid()}-")
    os.chmod(folder, 0o755)
    names = []
    for name, data in handin.files.items():
        parts = [p for p in name.split("/") if p not in ("", ".", "..")]
        target = Path(folder, *parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)
        names.append("/".join(parts))
    return folder, names


def safe_name(student: str) -> str:
    """A file name for a student's state and feedback files: their name's safe characters and a short digest
    (two students whose names differ only in unsafe characters never share a file)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", student).strip("._")[:60] or "student"
    return f"{readable}-{hashlib.sha256(student.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def sweep_stale() -> None:
    """Remove the staged hand-ins of graders that were killed (SIGKILL leaves no time to clean up)."""
    import shutil

    for folder in Path(tempfile.gettempdir()).glob(f"{STAGED}*-*"):
        owner = folder.name[len(STAGED) :].split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
