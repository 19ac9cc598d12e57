"""Every name a page's prose tells the reader to call exists in that page's namespace.

"Run `f(…)`", "call `f`", "try `f`", "use `f`", "pass … to `f`": the name ``f`` at the root of the
span must be bound by one of the page's code cells (the names Run All leaves in the kernel:
assignments, ``def``, ``class``, imports; read with the out-of-order hint's own reader,
``booklab.kernel.defined_names``) or be a builtin."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import jupytext
import pytest

from booklab.kernel import defined_names

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted(p for p in (REPO / "notebooks").rglob("*.md") if ".ipynb_checkpoints" not in p.parts)
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
TOLD = re.compile(r"\b(call|run|try|use|pass\b[^.`]*\bto)\s*$", re.IGNORECASE)


def told_to_call(markdown: str) -> list[tuple[str, str]]:
    """(span, root name) for every inline-code span the prose tells the reader to call."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    found = []
    for match in SPAN.finditer(text):
        if not TOLD.search(text[max(0, match.start() - 60) : match.start()]):
            continue
        try:
            root = ast.parse(match.group(1), mode="eval").body
        except SyntaxError:
            continue
        while isinstance(root, ast.Call | ast.Attribute):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name):
            found.append((match.group(1), root.id))
    return found


def test_the_reader_of_the_spans_finds_what_it_should():
    told = told_to_call("Run `run_text_trace(cfg(1))` and pass the result to `decode_stepper`; `x(1)` is not told.")
    assert told == [("run_text_trace(cfg(1))", "run_text_trace"), ("decode_stepper", "decode_stepper")]


@pytest.mark.parametrize("md", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_name_the_prose_tells_the_reader_to_call_exists(md):
    notebook = jupytext.read(md)
    bound = set(dir(builtins))
    for cell in notebook.cells:
        if cell.cell_type == "code":
            bound |= defined_names(cell.source)
    missing = [
        span
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for span, name in told_to_call(cell.source)
        if name not in bound
    ]
    assert not missing, f"{md.relative_to(REPO)} tells the reader to call names no cell defines: {missing}"
