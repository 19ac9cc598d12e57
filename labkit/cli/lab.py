"""``labkit lab``: open the book in JupyterLab at its first page, without ``make``.

What ``make lab`` does, with the standard library only (any OS, no shell):

- the book's JupyterLab settings (``lab_overrides.json`` beside this file, the same as the
  repository's ``jupyter/overrides.json``): MyST ``.md`` pages open as notebooks, no news or
  update prompts. They are given to JupyterLab as its settings folder for this run, so the
  Python environment is not modified;
- Jupyter, IPython and matplotlib state kept in the book's ``build/`` folder, never in the
  home folder;
- the preface opened.

The book is the folder given with ``--book``, else the current folder when it holds the
book, else the clone this ``labkit`` was installed from (``pip install -e .``).
Arguments after ``--`` go to ``jupyter lab`` unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PREFACE = Path("notebooks") / "00-preface.md"
SETTINGS = Path(__file__).with_name("lab_overrides.json")


def configure(parser) -> None:
    parser.add_argument(
        "--book",
        type=Path,
        metavar="PATH",
        help="the book's folder (default: this folder, or the clone labkit runs from)",
    )
    parser.add_argument("--port", type=int, help="the port to serve on (default: JupyterLab's, 8888 or the next free)")
    parser.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    parser.add_argument("--dry-run", action="store_true", help="print the command and the environment, start nothing")
    parser.add_argument("jupyter_args", nargs="*", metavar="-- ARGS", help="passed on to jupyter lab")


def run(args) -> int:
    book = find_book(args.book)
    state = book / "build" / "jupyter"
    env = lab_environment(book)
    command = lab_command(
        book, state / "lab-settings", port=args.port, no_browser=args.no_browser, extra=args.jupyter_args
    )
    if args.dry_run:
        for name in sorted(set(env) - set(os.environ)) + [
            n for n in sorted(env) if n in os.environ and env[n] != os.environ[n]
        ]:
            print(f"{name}={env[name]}")
        print(subprocess.list2cmdline(command))
        return 0
    install_settings(state / "lab-settings")
    os.chdir(book)
    if os.name == "posix":  # become JupyterLab: signals reach it directly
        os.execve(command[0], command, env)
    try:
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:  # Ctrl-C stops JupyterLab: not an error
        return 0


def _is_book(folder: Path) -> bool:
    return (folder / PREFACE).is_file() and (folder / "myst.yml").is_file()


def find_book(given: Path | None) -> Path:
    """The book's folder: ``given``, else the current folder, else the clone labkit runs from."""
    if given is not None:
        folder = Path(given).resolve()
        if not _is_book(folder):
            raise ValueError(
                f"--book must be the book's folder (with {PREFACE.as_posix()} and myst.yml), got {str(given)!r}"
            )
        return folder
    for folder in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if _is_book(folder):
            return folder
    raise ValueError(
        "no book here: run `labkit lab` inside the book's folder (a clone of the "
        "repository), or give it with --book PATH"
    )


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
    env = dict(os.environ)
    env.update({name: str(folder) for name, folder in folders.items()})
    env.update(
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        PYTHONHASHSEED="0",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        JUPYTER_PLATFORM_DIRS="1",
    )
    return env


def install_settings(folder: Path) -> Path:
    """Put the book's JupyterLab settings override into ``folder`` (JupyterLab's settings folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "overrides.json"
    shutil.copyfile(SETTINGS, target)
    return target


def lab_command(
    book: Path, settings: Path, port: int | None = None, no_browser: bool = False, extra: list[str] = ()
) -> list[str]:
    """``python -m jupyterlab`` serving ``book``, with ``settings`` and the preface opened."""
    import importlib.util

    if importlib.util.find_spec("jupyterlab") is None:
        raise ValueError('labkit lab needs JupyterLab: pip install "labkit[read]"')
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={book}",
        f"--LabApp.app_settings_dir={settings}",
        # pages open unmodified and the file browser lists one entry per page
        "--ServerApp.contents_manager_class=labkit.cli.lab_contents.BookContentsManager",
    ]
    if port is not None:
        command.append(f"--port={port}")
    if no_browser:
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return [*command, *extra, PREFACE.as_posix()]
