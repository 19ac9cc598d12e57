"""``labkit lab`` (``make lab`` runs it): open the book in JupyterLab at its first page.

The one place for the flags, standard library only: the book's ``jupyter/overrides.json`` as the
settings folder of this run, its contents manager (``lab_contents.py``), every Jupyter, IPython and
matplotlib folder under the book's ``build/`` (the runtime folder, which holds the token, private),
``lab_hint`` loaded in every kernel, ``--allow-root`` only when asked or announced when run as root.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

PREFACE = Path("notebooks") / "00-preface.md"
SETTINGS = Path("jupyter") / "overrides.json"  # the one copy, in the book
KERNEL_CONFIG = "c.InteractiveShellApp.extensions = ['labkit.cli.lab_hint']\n"


def configure(parser) -> None:
    parser.add_argument(
        "--book",
        type=Path,
        metavar="PATH",
        help="the book's folder (default: this folder or the nearest one above it)",
    )
    parser.add_argument("--allow-root", action="store_true", help="let JupyterLab run as root (as it asks)")
    parser.add_argument("--port", type=int, help="the port to serve on (default: JupyterLab's, 8888 or the next free)")
    parser.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    parser.add_argument("--dry-run", action="store_true", help="print the command and the environment, start nothing")
    parser.add_argument("jupyter_args", nargs="*", metavar="-- ARGS", help="passed on to jupyter lab")


def run(args) -> int:
    book = find_book(args.book)
    env = lab_environment(book)
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    command = lab_command(book, args.port, args.no_browser, args.jupyter_args, allow_root=args.allow_root or root)
    if root and not args.allow_root:
        print(
            "labkit lab: running as root, so --allow-root is added (give it yourself to silence this)", file=sys.stderr
        )
    if args.dry_run:
        for name in sorted(n for n in env if os.environ.get(n) != env[n]):  # what it sets
            print(f"{name}={env[name]}")
        print(subprocess.list2cmdline(command))
        return 0
    os.chdir(book)
    os.umask(0o077)  # what the server writes (the token in runtime/*-open.html) is the user's alone
    if os.name == "posix":  # become JupyterLab: signals reach it directly
        os.execve(command[0], command, env)
    try:
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:  # Ctrl-C stops JupyterLab: not an error
        return 0


def find_book(given: Path | None) -> Path:
    """The book's folder: ``given``, else the current folder or the nearest one above it."""
    from labkit.core.fixtures import book_root

    try:
        folder = book_root(given)
    except FileNotFoundError as exc:
        raise ValueError(f"{'--book: ' if given is not None else ''}{exc} (labkit lab --book PATH)") from None
    if not (folder / PREFACE).is_file() or not (folder / SETTINGS).is_file():
        raise ValueError(f"--book must be the book's folder (with {PREFACE.as_posix()} and {SETTINGS.as_posix()})")
    return folder


def lab_environment(book: Path) -> dict[str, str]:
    """The environment ``make lab`` exports: every Jupyter/IPython/matplotlib folder in build/."""
    state = book / "build"
    folders = {
        "JUPYTER_CONFIG_DIR": state / "jupyter" / "config",
        "JUPYTER_DATA_DIR": state / "jupyter" / "data",
        "JUPYTER_RUNTIME_DIR": state / "jupyter" / "runtime",
        "IPYTHONDIR": state / "ipython",
        "MPLCONFIGDIR": state / "matplotlib",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    folders["JUPYTER_RUNTIME_DIR"].chmod(0o700)  # it holds the server's token
    (state / "ipython" / "profile_default").mkdir(exist_ok=True)
    (state / "ipython" / "profile_default" / "ipython_kernel_config.py").write_text(KERNEL_CONFIG, encoding="utf-8")
    return {
        **os.environ,
        **{name: str(folder) for name, folder in folders.items()},
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONHASHSEED": "0",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    }


def lab_command(
    book: Path, port: int | None = None, no_browser: bool = False, extra: list[str] = (), allow_root: bool = False
) -> list[str]:
    """``python -m jupyterlab`` serving ``book`` with its settings and contents manager, at the preface."""
    if importlib.util.find_spec("jupyterlab") is None:
        raise ValueError('labkit lab needs JupyterLab: pip install "labkit[read]"')
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={book}",
        f"--LabApp.app_settings_dir={(book / SETTINGS).parent}",
        # pages open unmodified and the file browser lists one entry per page
        "--ServerApp.contents_manager_class=labkit.cli.lab_contents.BookContentsManager",
    ]
    flags = {f"--port={port}": port is not None, "--no-browser": no_browser, "--allow-root": allow_root}
    return [*command, *(flag for flag, given in flags.items() if given), *extra, PREFACE.as_posix()]
