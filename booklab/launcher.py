"""``labkit lab`` (``make lab`` runs it): open the book in JupyterLab at its first page.

The one place for the flags, standard library only: the book's ``jupyter/overrides.json`` as the
settings folder of this run, its contents manager (``booklab.contents``), every Jupyter, IPython and
matplotlib folder under the book's ``build/`` (the runtime folder, which holds the token, private),
the kernel extension (``booklab.kernel``) loaded in every kernel, the book's folder on the server's and
kernels' path (``booklab`` runs from the clone), ``--allow-root`` only when asked or announced when run as
root, ``--edition en|zh`` for the preface it opens.  A reader's edits and ``labkit reset``: ``booklab.edits``.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

from labkit.core.fixtures import book_root

PREFACE = Path("notebooks") / "00-preface.md"
SETTINGS = Path("jupyter") / "overrides.json"  # the one copy, in the book
#: the preface each edition opens at (the Chinese edition's tree is ``zh/``)
PREFACES = {"en": PREFACE, "zh": Path("zh") / "notebooks" / "00-preface.md"}
KERNEL_CONFIG = "c.InteractiveShellApp.extensions = ['booklab.kernel']\n"
#: a kernel nobody is connected to (its tab closed without shutting it down, the browser gone) is
#: shut down after 30 idle minutes: a student's session holds only the pages open in it
KERNEL_CULLING = {"cull_idle_timeout": 1800, "cull_interval": 300}
BOOK_HELP = "the book's folder (default: this folder or the nearest one above it)"
#: a terminal's shell: a login shell (as JupyterLab starts one when it has no terminal), whose
#: profile may set PATH anew, then the environment's bin folder in front (``labkit`` is there)
#: and the same shell, interactive
LOGIN_THEN_BOOK_PATH = 'PATH="$LABKIT_BIN${PATH:+:$PATH}"; export PATH; exec "$0" -i'
POSIX_SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}


def configure(parser) -> None:
    parser.add_argument("--book", type=Path, metavar="PATH", help=BOOK_HELP)
    parser.add_argument(
        "--edition", choices=list(PREFACES), default="en", help="the edition whose preface opens (default en)"
    )
    parser.add_argument("--allow-root", action="store_true", help="let JupyterLab run as root (as it asks)")
    parser.add_argument("--port", type=int, help="the port to serve on (default: JupyterLab's, 8888 or the next free)")
    parser.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    parser.add_argument("--dry-run", action="store_true", help="print the command and the environment, start nothing")
    parser.add_argument("jupyter_args", nargs="*", metavar="-- ARGS", help="passed on to jupyter lab")


def run(args) -> int:
    book = find_book(args.book)
    page = first_page(book, args.edition)
    env = lab_environment(book)
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    command = lab_command(
        book, args.port, args.no_browser, args.jupyter_args, allow_root=args.allow_root or root, page=page
    )
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


def find_book(given: Path | None, command: str = "lab") -> Path:
    """The book's folder: ``given``, else the current folder or the nearest one above it."""
    try:
        folder = book_root(given)
    except FileNotFoundError as exc:
        raise ValueError(f"{'--book: ' if given is not None else ''}{exc} (labkit {command} --book PATH)") from None
    if command == "reset":
        return folder
    if not (folder / PREFACE).is_file() or not (folder / SETTINGS).is_file():
        raise ValueError(f"--book must be the book's folder (with {PREFACE.as_posix()} and {SETTINGS.as_posix()})")
    return folder


def first_page(book: Path, edition: str = "en") -> Path:
    """The preface ``edition`` opens at (relative to ``book``); the English one, said on stderr, when
    that edition's preface is not in this book."""
    if edition not in PREFACES:
        raise ValueError(f"--edition must be one of {sorted(PREFACES)}, got {edition!r}")
    page = PREFACES[edition]
    if not (book / page).is_file():
        print(
            f"labkit lab: this book has no {edition} edition yet ({page.as_posix()} is missing);"
            f" opening the English preface, {PREFACE.as_posix()}",
            file=sys.stderr,
        )
        return PREFACE
    return page


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
        # `labkit check` and `labkit reset` in JupyterLab's terminal (and `!labkit` in a page) are
        # this environment's, whether it was activated (pip) or not (make lab)
        "PATH": os.pathsep.join([bin_dir(), *(p for p in os.environ.get("PATH", "").split(os.pathsep) if p)]),
        "LABKIT_BIN": bin_dir(),
        # the server's contents manager and the kernels' extension are booklab's, which runs from the clone
        "PYTHONPATH": os.pathsep.join(
            [*(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p), str(book)]
        ),
    }


def bin_dir() -> str:
    """The folder of this environment's commands (``labkit``, ``jupyter``): where its Python is."""
    return str(Path(sys.executable).parent)


def terminal_shell(environ: dict[str, str]) -> list[str] | None:
    """The shell command of JupyterLab's terminals (None on Windows: the server's PATH reaches
    them as it is).  JupyterLab starts a login shell when it is not run from a terminal, and a
    login shell's profile (Debian's /etc/profile) sets PATH anew: this one puts the book's
    environment in front after the profile ran."""
    if os.name == "nt":
        return None
    shell = environ.get("SHELL") or "/bin/sh"
    return [shell, "-l", "-c", LOGIN_THEN_BOOK_PATH, shell] if Path(shell).name in POSIX_SHELLS else [shell]


def lab_command(
    book: Path,
    port: int | None = None,
    no_browser: bool = False,
    extra: list[str] = (),
    allow_root: bool = False,
    page: Path = PREFACE,
) -> list[str]:
    """``python -m jupyterlab`` serving ``book`` with its settings and contents manager, at ``page`` (the
    preface: the page it opens, and the address it prints)."""
    if importlib.util.find_spec("jupyterlab") is None:
        raise ValueError('labkit lab needs JupyterLab: pip install "labkit[read]"')
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={book}",
        f"--LabApp.app_settings_dir={(book / SETTINGS).parent}",
        # pages open unmodified and the file browser lists one entry per page
        "--ServerApp.contents_manager_class=booklab.contents.BookContentsManager",
        # a page's kernel is shut down when its tab closes (overrides.json); one left idle is culled
        *(f"--MappingKernelManager.{name}={value}" for name, value in KERNEL_CULLING.items()),
        # the address JupyterLab prints (and its root /) opens the preface, not the Launcher
        f"--LabApp.default_url=/lab/tree/{page.as_posix()}",
    ]
    shell = terminal_shell(dict(os.environ))
    if shell:
        command.append(f"--ServerApp.terminado_settings=shell_command={shlex.join(shell)}")
    flags = {f"--port={port}": port is not None, "--no-browser": no_browser, "--allow-root": allow_root}
    return [*command, *(flag for flag, given in flags.items() if given), *extra, page.as_posix()]
