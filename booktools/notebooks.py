"""Regenerate paired notebooks and check that each ``.md`` and its ``.ipynb`` agree.

``build`` executes the ``.md``'s cells in a fresh kernel and writes the ``.ipynb`` without timing
metadata; ``prose`` copies Markdown cells only and keeps the stored outputs (it refuses a code change).
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

from booklab.edits import book_pages

KERNEL_TIMEOUT = 300


def _cells(nb) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.cell_type, c.source.strip(), tuple(c.get("metadata", {}).get("tags", []))) for c in nb.cells]


def pair_problems(md: Path) -> list[str]:
    """Why ``md`` and its ``.ipynb`` are out of step (empty list: in step)."""
    ipynb = md.with_suffix(".ipynb")
    if not ipynb.exists():
        return [f"{md.name}: no paired {ipynb.name}; run `make notebooks`"]
    source = jupytext.read(md)
    stored = nbformat.read(ipynb, as_version=4)
    problems = []
    a, b = _cells(source), _cells(stored)
    if len(a) != len(b):
        problems.append(f"{md.name}: {len(a)} cells in the .md but {len(b)} in the .ipynb")
    for index, (left, right) in enumerate(zip(a, b, strict=False)):
        if left != right:
            what = "type" if left[0] != right[0] else "source" if left[1] != right[1] else "tags"
            problems.append(f"{md.name}: cell {index} differs in its {what} from {ipynb.name}")
            break
    for index, cell in enumerate(stored.cells):
        if cell.cell_type == "code" and cell.source.strip() and cell.get("execution_count") is None:
            problems.append(f"{ipynb.name}: code cell {index} was never executed")
            break
        if cell.cell_type == "code" and "execution" in cell.get("metadata", {}):
            problems.append(f"{ipynb.name}: code cell {index} stores timing metadata")
            break
    return problems


def check_pairs(root: Path) -> list[str]:
    """Every page of the book at ``root`` out of step with its ``.ipynb``, and every ``.ipynb`` with no page."""
    problems = [problem for md in book_pages(root) for problem in pair_problems(md)]
    for ipynb in sorted((root / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in ipynb.parts and not ipynb.with_suffix(".md").exists():
            problems.append(f"{ipynb.name}: no .md source beside it")
    return problems


def build(md: Path, timeout: int = KERNEL_TIMEOUT) -> Path:
    """Execute ``md``'s cells in a fresh kernel and write the paired ``.ipynb``."""
    md = Path(md).resolve()
    nb = jupytext.read(md)
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(md.parent)}},
        record_timing=False,
        store_widget_state=False,
    ).execute()
    stem = f"{md.parent.name}-{md.stem}"[-56:].strip("-")
    for index, cell in enumerate(nb.cells):
        # stable ids, unique across the book: regenerated notebooks stay diff-quiet and
        # mystmd sees no duplicate identifiers
        cell.id = f"{stem}-{index:03d}"
        cell.metadata.pop("execution", None)
        for number, output in enumerate(cell.get("outputs", [])):
            output.get("metadata", {}).pop("execution", None)
            view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view:  # a widget's model id is random: name it after its cell instead
                view["model_id"] = f"{cell.id}-{number}"
    nb.metadata["language_info"] = {"name": "python"}
    out = md.with_suffix(".ipynb")
    nbformat.write(nb, out)
    return out


def sync_prose(md: Path) -> Path:
    """Copy ``md``'s Markdown cells into its ``.ipynb``, keeping ids and outputs."""
    md = Path(md).resolve()
    ipynb = md.with_suffix(".ipynb")
    source = jupytext.read(md)
    stored = nbformat.read(ipynb, as_version=4)
    a, b = _cells(source), _cells(stored)
    same_layout = len(a) == len(b) and all(
        x[0] == y[0] and x[2] == y[2] and (x[0] != "code" or x[1] == y[1]) for x, y in zip(a, b, strict=True)
    )
    if not same_layout:
        raise ValueError(f"{md.name}: code cells, tags or the cell layout changed; run `make notebooks NB={md}`")
    for new, old in zip(source.cells, stored.cells, strict=True):
        if new.cell_type == "markdown":
            old.source = new.source
    nbformat.write(stored, ipynb)
    return ipynb
