"""``labkit class-copy DEST``: the book without its answer key, ready to hand out.

Copies the files of the book git would keep into DEST, leaving out ``solutions/`` and every test file
holding a function (at any depth, or in a string of code) that passes one of the book's checkers,
each candidate tried in the sandbox.  The copy's ``make test`` passes: tests that need the key skip.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: the answer key, left out of a class copy
ANSWER_KEY = "solutions"
#: never copied when git cannot say what is tracked (build state, caches, environments)
SKIPPED = {
    ".git",
    ".venv",
    "build",
    "_build",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    "browser-screenshots",
    "node_modules",
}


def configure(parser) -> None:
    parser.add_argument("dest", type=Path, help="a new (or empty) folder for the copy")


def run(args) -> int:
    from labkit.core.fixtures import book_root

    root = book_root()  # a problem (no book here, DEST not empty) is one line from ``labkit.cli.main``
    answers = answers_in_tests(root)
    copied = class_copy(root, args.dest, leave_out={path for path, _, _ in answers})
    for path, function, name in answers:
        print(f"left out {path}: its {function} passes the exercise {name}")
    print(f"wrote {len(copied)} files to {args.dest} (no {ANSWER_KEY}/); check it with: cd {args.dest} && make test")
    return 0


def book_files(root: Path) -> list[Path]:
    """The files of the book under ``root``, relative, sorted; the answer key left out."""
    listed = _git_files(root)
    if listed is None:
        found = (p.relative_to(root) for p in root.rglob("*"))
        listed = [p for p in found if not SKIPPED.intersection(p.parts) and not p.name.endswith(".egg-info")]
    # files only (git lists a deleted one too); a link is copied as a link: labkit/fixtures points at fixtures/
    return sorted(p for p in listed if p.parts[0] != ANSWER_KEY and ((root / p).is_file() or (root / p).is_symlink()))


def _git_files(root: Path) -> list[Path] | None:
    """The files git keeps (tracked, or new and not ignored); None without a clone or without git."""
    if not (root / ".git").exists():
        return None
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = subprocess.run(command, cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [Path(name) for name in listed.decode().split("\0") if name]


def class_copy(root: Path, dest: Path, leave_out: set[Path] = frozenset()) -> list[Path]:
    """Copy the book at ``root`` to ``dest`` without ``solutions/`` and ``leave_out``; return the files copied."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"DEST must be a new or empty folder, got {str(dest)!r} (it holds files)")
    if dest == root or root in dest.parents:
        raise ValueError(f"DEST must lie outside the book's repository {str(root)!r}, got {str(dest)!r}")
    files = [p for p in book_files(root) if p not in leave_out]
    for relative in files:
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target, follow_symlinks=False)
    return files


def answers_in_tests(root: Path) -> list[tuple[Path, str, str]]:
    """(test file, function, exercise) for every function in ``root/tests`` that passes a checker.

    Every ``def`` is tried — nested ones too — except pytest's own tests and fixtures, compiled
    with its file's imports; a ``def`` inside a string of code (a test's answer file, maybe a
    hostile one) is tried in the sandbox of ``labkit check --file``."""
    import labkit.check as check

    specs = check.exercises()
    found = []
    # a test's helper may write where it is pointed (a store opened on whatever argument it is
    # handed): the scan runs in a scratch folder, so nothing lands in the teacher's folder
    with _quiet(), tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
        for path in sorted((Path(root) / "tests").rglob("*.py")):
            relative = path.relative_to(root)
            found += [(relative, f.__name__, name) for f in _functions(path) for name in _passed(f, specs)]
            found += [(relative, name, spec) for name, spec in _answers_in_strings(path, specs)]
    return found


def _passed(candidate, specs: dict) -> list[str]:
    """The exercises ``candidate`` passes: each checker whose signature it takes, tried afresh (one
    that raises is no pass; a sandbox that loses its child raises ``CouldNotCheck``, no ``Exception``)."""
    from labkit.check.core import reset_attempts

    passed = []
    for spec in specs.values():
        reset_attempts()
        try:
            inspect.signature(candidate).bind(*spec.signature)
            if spec(candidate).passed:
                passed.append(spec.name)
        except Exception:
            continue
    return passed


def _plain_defs(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("test") and not node.decorator_list:
            yield node


def _functions(path: Path):
    """Every plain ``def`` of the file at any depth, compiled with the file's imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports, namespace = ast.Module([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], []), {}
    try:
        exec(compile(imports, str(path), "exec"), namespace)
    except Exception:
        return
    for node in _plain_defs(tree):
        scope = dict(namespace)
        try:
            exec(compile(ast.Module([node], []), str(path), "exec"), scope)
        except Exception:
            continue
        yield scope[node.name]


def _answers_in_strings(path: Path, specs: dict):
    """(function, exercise) for each ``def`` in a string constant of ``path`` that passes a checker,
    each string run as an answer file in the sandbox (never in this process)."""
    from labkit.cli import sandbox

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and "def " in node.value):
            continue
        try:
            names = [d.name for d in _plain_defs(ast.parse(node.value))]
        except SyntaxError:
            continue
        with tempfile.TemporaryDirectory() as folder:
            answer = Path(folder) / "answer.py"
            answer.write_text(node.value, encoding="utf-8")
            for name in names:  # one child tries every checker; one that loses its child is no answer
                try:
                    with sandbox.Sandbox(answer, name, sandbox.Limits(seconds=5)) as box:
                        yield from ((name, exercise) for exercise in _passed(box.candidate, specs))
                except sandbox.CouldNotCheck:
                    continue


@contextlib.contextmanager
def _quiet():
    """Silence file descriptors 1 and 2 (LAPACK prints when a wrong function feeds it NaN)."""
    sys.stdout.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "wb") as null:
        for fd in (1, 2):
            os.dup2(null.fileno(), fd)
    try:
        yield
    finally:
        sys.stdout.flush()
        for fd, kept in enumerate(saved, start=1):
            os.dup2(kept, fd)
            os.close(kept)
