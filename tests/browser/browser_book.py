"""What the browser suite has to cover, read from the repository (no browser needed).

The table of contents in ``myst.yml`` lists the pages; each notebook page is a MyST ``.md``
(the source a reader opens) paired with an ``.ipynb`` (its stored outputs).  From them this
module derives, for every toc notebook:

- its widget cells (tag ``widget``), each named ``<page.md>::<expression>`` after the last
  line of the cell, the expression whose value JupyterLab displays (``stepper``);
- the cells whose stored outputs hold a figure (``image/png``) — after "Run All" the same
  cells must show an image in the browser.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


@dataclass(frozen=True)
class WidgetCell:
    """One ``widget``-tagged cell: ``index`` counts every cell of the page from 0."""

    page: str  # "notebooks/07-traces/02-text.md"
    index: int
    expression: str  # last line of the cell: the displayed widget, e.g. "stepper"

    @property
    def key(self) -> str:
        return f"{self.page}::{self.expression}"


@dataclass(frozen=True)
class Page:
    """One toc notebook as the browser suite sees it."""

    md: str  # path of the MyST source relative to the repository
    title: str
    cell_count: int
    widgets: tuple[WidgetCell, ...] = field(default=())
    figure_cells: tuple[int, ...] = field(default=())  # cells with a stored image/png

    @property
    def slug(self) -> str:
        return self.md.removeprefix("notebooks/").removesuffix(".md").replace("/", "__")


def toc_entries(root: Path = REPO) -> list[str]:
    """Every ``file:`` of the toc in ``myst.yml``, in reading order."""
    from booktools.book import load_config, toc_files

    return toc_files(load_config(root))


def is_notebook_source(md: Path) -> bool:
    """A MyST notebook (jupytext front matter) rather than a plain MyST page."""
    head = md.read_text(encoding="utf-8")[:800]
    return head.startswith("---") and "jupytext" in head


def toc_notebook_sources(root: Path = REPO) -> list[str]:
    """The ``.md`` sources of the toc's notebooks (plain pages such as the glossary skipped)."""
    found = []
    for entry in toc_entries(root):
        md = (root / entry).with_suffix(".md")
        if md.exists() and is_notebook_source(md) and md.relative_to(root).as_posix() not in found:
            found.append(md.relative_to(root).as_posix())
    return found


def notebook_sources_on_disk(root: Path = REPO) -> list[str]:
    """Every MyST notebook under ``notebooks/`` (checkpoints skipped)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in (root / "notebooks").rglob("*.md")
        if ".ipynb_checkpoints" not in p.parts and is_notebook_source(p)
    )


def _tags(cell) -> tuple[str, ...]:
    return tuple(cell.get("metadata", {}).get("tags", []))


def widget_cells(md_rel: str, root: Path = REPO) -> tuple[WidgetCell, ...]:
    """The ``widget`` cells of one page, read from its MyST source."""
    import jupytext

    nb = jupytext.read(root / md_rel)
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "widget" in _tags(cell):
            lines = [line.strip() for line in cell.source.strip().splitlines() if line.strip()]
            if not lines:
                raise ValueError(f"{md_rel}: widget cell {index} is empty")
            cells.append(WidgetCell(md_rel, index, lines[-1]))
    return tuple(cells)


def stored_figure_cells(ipynb: Path) -> tuple[int, ...]:
    """Indices of the non-widget code cells whose stored outputs include an ``image/png``."""
    if not ipynb.exists():
        return ()
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    found = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or "widget" in _tags(cell):
            continue
        if any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
            found.append(index)
    return tuple(found)


@functools.cache
def page(md_rel: str, root: Path = REPO) -> Page:
    """One page as the suite sees it (read once per session)."""
    import jupytext

    nb = jupytext.read(root / md_rel)
    title = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    title = line[2:].strip()
                    break
        if title:
            break
    return Page(
        md=md_rel,
        title=title,
        cell_count=len(nb.cells),
        widgets=widget_cells(md_rel, root),
        figure_cells=stored_figure_cells((root / md_rel).with_suffix(".ipynb")),
    )


def toc_pages(root: Path = REPO) -> list[Page]:
    """The pages the suite opens: the toc's notebooks in reading order.  With
    ``LABKIT_BROWSER_ALL_NOTEBOOKS=1`` also the notebooks not (yet) in the toc, after them."""
    sources = toc_notebook_sources(root)
    if os.environ.get("LABKIT_BROWSER_ALL_NOTEBOOKS") == "1":
        sources += [md for md in notebook_sources_on_disk(root) if md not in sources]
    return [page(md, root) for md in sources]


def all_pages(root: Path = REPO) -> list[Page]:
    """Every notebook page, in the toc or not (toc order first)."""
    sources = toc_notebook_sources(root)
    sources += [md for md in notebook_sources_on_disk(root) if md not in sources]
    return [page(md, root) for md in sources]
