"""``labkit lab`` (``make lab`` runs it): open the book in JupyterLab at its first page; the reader's
working copies and ``labkit reset``; the kernel extension that names the cell a page run out of order needs.

The one place for the flags, standard library only: the book's ``jupyter/overrides.json`` as the
settings folder of this run, its contents manager (``lab_contents.py``), every Jupyter, IPython and
matplotlib folder under the book's ``build/`` (the runtime folder, which holds the token, private),
this module loaded in every kernel as an extension, ``--allow-root`` only when asked or announced when run as root.

A reader's edits of ``notebooks/…/page.md`` live in ``my-edits/notebooks/…/page.ipynb``
(``lab_contents.py``); ``labkit reset PAGE | --all`` sets that copy aside as ``page.before-reset.ipynb``
(one undo); with no argument it lists the pages that have edits.
"""

from __future__ import annotations

import functools
import gc
import importlib.util
import os
import shlex
import subprocess
import symtable
import sys
from pathlib import Path

from labkit.core.strictjson import read_json_file

PREFACE = Path("notebooks") / "00-preface.md"
SETTINGS = Path("jupyter") / "overrides.json"  # the one copy, in the book
KERNEL_CONFIG = "c.InteractiveShellApp.extensions = ['labkit.cli.lab']\n"
#: a kernel nobody is connected to (its tab closed without shutting it down, the browser gone) is
#: shut down after 30 idle minutes: a student's session holds only the pages open in it
KERNEL_CULLING = {"cull_idle_timeout": 1800, "cull_interval": 300}
EDITS = "my-edits"  # the reader's working copies, beside notebooks/ (kept out of git)
PAGES = "notebooks"
PAGE_SUFFIXES = (".md", ".ipynb")
SET_ASIDE = ".before-reset.ipynb"
FRONT_MATTER = b"---\njupytext:"  # how every page's .md begins (CONTRIBUTING: start from the preface's)
BOOK_HELP = "the book's folder (default: this folder or the nearest one above it)"
#: what JupyterLab's File menu calls reloading an open page (a .md opened as a notebook is a
#: "Markdown File" to it: ``Reload %1 from Disk`` with the file type's name)
RELOAD = "File → Reload Markdown File from Disk"
#: a terminal's shell: a login shell (as JupyterLab starts one when it has no terminal), whose
#: profile may set PATH anew, then the environment's bin folder in front (``labkit`` is there)
#: and the same shell, interactive
LOGIN_THEN_BOOK_PATH = 'PATH="$LABKIT_BIN${PATH:+:$PATH}"; export PATH; exec "$0" -i'
POSIX_SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}


def configure(parser) -> None:
    parser.add_argument("--book", type=Path, metavar="PATH", help=BOOK_HELP)
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


def find_book(given: Path | None, command: str = "lab") -> Path:
    """The book's folder: ``given``, else the current folder or the nearest one above it."""
    from labkit.core.fixtures import book_root

    try:
        folder = book_root(given)
    except FileNotFoundError as exc:
        raise ValueError(f"{'--book: ' if given is not None else ''}{exc} (labkit {command} --book PATH)") from None
    if command == "reset":
        return folder
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
        # `labkit check` and `labkit reset` in JupyterLab's terminal (and `!labkit` in a page) are
        # this environment's, whether it was activated (pip) or not (make lab)
        "PATH": os.pathsep.join([bin_dir(), *(p for p in os.environ.get("PATH", "").split(os.pathsep) if p)]),
        "LABKIT_BIN": bin_dir(),
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
    book: Path, port: int | None = None, no_browser: bool = False, extra: list[str] = (), allow_root: bool = False
) -> list[str]:
    """``python -m jupyterlab`` serving ``book`` with its settings and contents manager, at the preface
    (the page it opens, and the address it prints)."""
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
        # a page's kernel is shut down when its tab closes (overrides.json); one left idle is culled
        *(f"--MappingKernelManager.{name}={value}" for name, value in KERNEL_CULLING.items()),
        # the address JupyterLab prints (and its root /) opens the preface, not the Launcher
        f"--LabApp.default_url=/lab/tree/{PREFACE.as_posix()}",
    ]
    shell = terminal_shell(dict(os.environ))
    if shell:
        command.append(f"--ServerApp.terminado_settings=shell_command={shlex.join(shell)}")
    flags = {f"--port={port}": port is not None, "--no-browser": no_browser, "--allow-root": allow_root}
    return [*command, *(flag for flag, given in flags.items() if given), *extra, PREFACE.as_posix()]


# -- the reader's working copies (``my-edits/``) and ``labkit reset`` --


def book_of(file: Path) -> Path | None:
    """The book a file belongs to: the folder above it holding ``myst.yml`` and ``notebooks/``."""
    folders = Path(file).resolve().parents
    return next((f for f in folders if (f / "myst.yml").is_file() and (f / PAGES).is_dir()), None)


def is_page(file: Path) -> bool:
    """``file`` is a page the book ships: a notebook (``.md``/``.ipynb``) under a book's notebooks/
    whose MyST source starts with the book's front matter (a reader's own new notebook does not)."""
    file, book = Path(file).resolve(), book_of(file)
    if ".ipynb_checkpoints" in file.parts:  # JupyterLab's checkpoint of a page is no page
        return False
    if file.suffix not in PAGE_SUFFIXES or not file.is_file() or book is None or (book / PAGES) not in file.parents:
        return False
    source = file.with_suffix(".md")
    return source.is_file() and source.read_bytes().startswith(FRONT_MATTER)


def book_pages(book: Path) -> list[Path]:
    """Every page (its ``.md``) of the book at ``book``, sorted; checkpoints left out."""
    found = (p for p in (book / PAGES).rglob("*.md") if ".ipynb_checkpoints" not in p.parts)
    return sorted(p for p in found if p.read_bytes().startswith(FRONT_MATTER))


def working_copy(page: Path) -> Path:
    """Where the reader's edits of ``page`` (its ``.md`` or ``.ipynb``) are kept."""
    page = Path(page).resolve()
    book = book_of(page)
    return book / EDITS / page.relative_to(book).with_suffix(".ipynb")


def set_aside(copy: Path) -> Path:
    """Move a working copy out of the way (replacing an earlier one set aside), stamped now: an
    open page then reads as changed on disk, and JupyterLab asks before saving the edits again."""
    aside = copy.replace(copy.with_name(copy.stem + SET_ASIDE))
    os.utime(aside)
    return aside


def edited_pages(book: Path) -> list[Path]:
    """The pages (their ``.md``) that have a working copy."""
    found = sorted((book / EDITS).rglob("*.ipynb")) if (book / EDITS).is_dir() else []
    pages = [book / copy.relative_to(book / EDITS).with_suffix(".md") for copy in found]
    return [page for page in pages if is_page(page)]  # a copy set aside names no page


def page_path(book: Path, given: str) -> Path:
    """``given`` (a page's .md or .ipynb, from here or from the book's folder) as the page's .md."""
    for candidate in (Path(given).resolve(), (book / given).resolve()):
        if is_page(candidate) and book_of(candidate) == book:
            return candidate.with_suffix(".md")
    raise ValueError(f"PAGE must be a page of the book (a .md or .ipynb under {book / PAGES}), got {given!r}")


def configure_reset(parser) -> None:
    parser.add_argument("page", nargs="?", metavar="PAGE", help="the page to reset (its .md or .ipynb)")
    parser.add_argument("--all", action="store_true", help="reset every page that has edits")
    parser.add_argument("--book", type=Path, metavar="PATH", help=BOOK_HELP)


def run_reset(args) -> int:
    book = find_book(args.book, "reset")
    if args.all and args.page:
        raise ValueError("give PAGE or --all, not both")
    edited = edited_pages(book)
    if not args.all and not args.page:
        for page in edited:
            print(page.relative_to(book).as_posix())
        print(f"{len(edited)} page(s) with edits; labkit reset PAGE (or --all) brings a page back", flush=True)
        return 0
    for page in edited if args.all else [page_path(book, args.page)]:
        copy, name = working_copy(page), page.relative_to(book).as_posix()
        if copy.is_file():
            print(f"{name}: back to the book's page; your edits are in {set_aside(copy).relative_to(book)}")
        else:
            print(f"{name}: already the book's page (no edits)")
    print(f"reload an open page in JupyterLab: {RELOAD}")
    return 0


# -- the kernel extension: a ``NameError`` names the cell to run first (``%load_ext labkit.cli.lab``) --
# The page is the notebook whose path JupyterLab sets as ``__session__``; its cells are read from the
# reader's working copy or the paired ``.ipynb``.  Any other error is left as it is.


def bound_names(source: str) -> set[str]:
    """The names Python ``source`` binds at its top level (not inside functions or classes), read from
    its symbol table: assignments, ``def``, ``class``, imports, loop, ``with`` and ``except`` targets."""
    table = symtable.symtable(source, "<cell>", "exec")
    return {symbol.get_name() for symbol in table.get_symbols() if symbol.is_assigned() or symbol.is_imported()}


def defined_names(source: str) -> set[str]:
    """The names a cell binds in the notebook's namespace (its magics read as IPython reads them)."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return bound_names(TransformerManager().transform_cell(source))
    except SyntaxError:
        return set()


def where_defined(cells: list[dict], name: str) -> str | None:
    """ "cell N (under “heading”)" for the first code cell of ``cells`` that defines ``name``."""
    heading = None
    for number, cell in enumerate(cells, start=1):
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            titles = [line.lstrip("#").strip() for line in source.splitlines() if line.startswith("#")]
            heading = titles[-1] if titles else heading
        elif cell.get("cell_type") == "code" and name in defined_names(source):
            return f"cell {number}" + (f" (under “{heading}”)" if heading else "")
    return None


def page_cells(session: str) -> list[dict]:
    """The cells of the page at ``session`` (its ``.md`` or ``.ipynb``) as the reader has it: the
    reader's working copy when there is one, else the paired ``.ipynb``."""
    page = Path(session)
    stored = working_copy(page) if is_page(page) and working_copy(page).is_file() else page.with_suffix(".ipynb")
    return read_json_file(stored)["cells"] if stored.is_file() else []


def hint(shell, name: str) -> str | None:
    session = shell.user_ns.get("__session__")
    place = where_defined(page_cells(session), name) if session else None
    return f"run the page from the top (Run → Run All Cells): `{name}` is defined in {place}" if place else None


def give_back_freed_memory(*_) -> None:
    """Return the heap's freed pages to the system after a cell (glibc's ``malloc_trim``): without it a
    page run again holds the high-water mark of every earlier run (page 07-10: 215 MB after one run,
    332 MB after two; 224 MB with this)."""
    libc = _glibc()
    if libc is not None:
        gc.collect()  # what a cycle still holds cannot be given back
        libc.malloc_trim(0)


@functools.cache
def _glibc():
    """The C library when it is glibc (it has ``malloc_trim``), else None (macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def load_ipython_extension(shell) -> None:
    shell.events.register("post_run_cell", give_back_freed_memory)

    def on_name_error(shell, etype, value, tb, tb_offset=None):
        found = getattr(value, "name", None) and hint(shell, value.name)
        if found:
            value.args = (f"{value.args[0] if value.args else value} — {found}",)
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    shell.set_custom_exc((NameError,), on_name_error)


def unload_ipython_extension(shell) -> None:
    shell.set_custom_exc((), None)
    shell.events.unregister("post_run_cell", give_back_freed_memory)
