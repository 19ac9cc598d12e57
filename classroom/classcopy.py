"""``python -m classroom copy DEST`` (``make class-copy DEST=…``): the book without its answer key, to hand out.

Copies the files of the book git would keep into DEST, leaving out the answer key: ``answer_key/``
(the reference implementations, expected values and hidden cases, which the grader imports) and,
while it still exists, ``solutions/``.  The copy's ``make test`` passes: tests that need the key skip.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

#: the answer key's folders, left out of a class copy
ANSWER_KEY = ("answer_key", "solutions")
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

    root = book_root()  # a problem (no book here, DEST not empty) is one line from ``classroom.main``
    copied = class_copy(root, args.dest)
    print(f"wrote {len(copied)} files to {args.dest} (no answer key); check it with: cd {args.dest} && make test")
    return 0


def book_files(root: Path) -> list[Path]:
    """The files of the book under ``root``, relative, sorted; the answer key left out."""
    listed = _git_files(root)
    if listed is None:
        found = (p.relative_to(root) for p in root.rglob("*"))
        listed = [p for p in found if not SKIPPED.intersection(p.parts) and not p.name.endswith(".egg-info")]
    # files only (git lists a deleted one too); a link is copied as a link: labkit/fixtures points at fixtures/
    return sorted(
        p for p in listed if p.parts[0] not in ANSWER_KEY and ((root / p).is_file() or (root / p).is_symlink())
    )


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


def class_copy(root: Path, dest: Path) -> list[Path]:
    """Copy the book at ``root`` to ``dest`` without the answer key; return the files copied."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"DEST must be a new or empty folder, got {str(dest)!r} (it holds files)")
    if dest == root or root in dest.parents:
        raise ValueError(f"DEST must lie outside the book's repository {str(root)!r}, got {str(dest)!r}")
    files = book_files(root)
    for relative in files:
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target, follow_symlinks=False)
    return files
