"""The kernel extension of the book's JupyterLab (``%load_ext booklab.kernel``; ``labkit lab`` loads it in
every kernel): a ``NameError`` names the cell of the page that defines the name (run the page from the top),
and after every cell the heap's freed pages go back to the system.

The page is the notebook whose path JupyterLab sets as ``__session__``; its cells are read from the
reader's working copy or the paired ``.ipynb``.  Any other error is left as it is.
"""

from __future__ import annotations

import functools
import gc
import symtable
import sys
from pathlib import Path

from booklab.edits import is_page, working_copy
from labkit.core.strictjson import read_json_file


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
