"""``labkit class-copy DEST``: the book without its answer key, ready to hand out.

Copies the repository this ``labkit`` runs from — the files git tracks, plus new files git
does not ignore (every file but the ignored ones when git is missing) — into DEST, leaving
out ``solutions/``. The copy's own ``make test`` passes: the tests that need the answer key
skip with a message when it is absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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
    try:
        copied = class_copy(book_root(), args.dest)
    except ValueError as problem:
        print(f"labkit class-copy: {problem}", file=sys.stderr)
        return 2
    print(f"wrote {len(copied)} files to {args.dest} (no {ANSWER_KEY}/); check it with: cd {args.dest} && make test")
    return 0


def book_root() -> Path:
    """The repository this labkit was installed from (an editable install of a clone)."""
    root = Path(__file__).resolve().parents[2]
    if not ((root / "myst.yml").is_file() and (root / "notebooks").is_dir()):
        raise ValueError(
            f"class-copy needs the book's repository (a clone installed with `pip install -e .`); {root} is not one"
        )
    return root


def book_files(root: Path) -> list[Path]:
    """The files of the book under ``root``, relative, sorted; the answer key left out."""
    listed = _git_files(root)
    if listed is None:
        listed = [
            p.relative_to(root)
            for p in root.rglob("*")
            if p.is_file() and not SKIPPED.intersection(p.relative_to(root).parts) and not p.name.endswith(".egg-info")
        ]
    return sorted(p for p in listed if p.parts[0] != ANSWER_KEY and (root / p).is_file())


def _git_files(root: Path) -> list[Path] | None:
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    done = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    return [Path(name) for name in done.stdout.decode().split("\0") if name]


def class_copy(root: Path, dest: Path) -> list[Path]:
    """Copy the book at ``root`` to ``dest`` without ``solutions/``; return the files copied."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"DEST must be a new or empty folder, got {str(dest)!r} (it holds files)")
    if dest == root or root in dest.parents:
        raise ValueError(f"DEST must lie outside the book's repository {str(root)!r}, got {str(dest)!r}")
    files = book_files(root)
    for relative in files:
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)
    return files
