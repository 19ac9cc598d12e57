"""An IPython extension for a page run out of order: a ``NameError`` names the cell to run first.

``labkit lab`` and the binder image load it in every kernel (by hand: ``%load_ext labkit.cli.lab_hint``).
The page is the notebook whose path JupyterLab sets as ``__session__``; its cells are read from the
reader's working copy (``my-edits/``) or the paired ``.ipynb``.  Any other error is left as it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

from labkit.core.strictjson import read_json_file

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)


def bound_names(node: ast.AST):
    """The names ``node`` binds in the notebook's namespace (not inside functions or classes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child.id
        elif isinstance(child, ast.Import | ast.ImportFrom):
            yield from ((a.asname or a.name).split(".")[0] for a in child.names)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield child.name
        if not isinstance(child, SCOPES + (ast.GeneratorExp,)):
            yield from bound_names(child)


def defined_names(source: str) -> set[str]:
    """The names a cell binds: assignments, ``def``, ``class``, imports, loop and ``with`` targets."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return set(bound_names(ast.parse(TransformerManager().transform_cell(source))))
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
    from labkit.cli.reset import is_page, working_copy

    page = Path(session)
    stored = working_copy(page) if is_page(page) and working_copy(page).is_file() else page.with_suffix(".ipynb")
    return read_json_file(stored)["cells"] if stored.is_file() else []


def hint(shell, name: str) -> str | None:
    session = shell.user_ns.get("__session__")
    place = where_defined(page_cells(session), name) if session else None
    return f"run the page from the top (Run → Run All Cells): `{name}` is defined in {place}" if place else None


def load_ipython_extension(shell) -> None:
    def on_name_error(shell, etype, value, tb, tb_offset=None):
        found = getattr(value, "name", None) and hint(shell, value.name)
        if found:
            value.args = (f"{value.args[0] if value.args else value} — {found}",)
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    shell.set_custom_exc((NameError,), on_name_error)


def unload_ipython_extension(shell) -> None:
    shell.set_custom_exc((), None)
