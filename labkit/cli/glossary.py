"""The glossary's hover text: made from the glossary page when a page is read, never written into it.

A page links a term to its entry with a plain link, ``[KV cache](../glossary.md#term-kv-cache)``
(``{term}`` does not resolve across pages in JupyterLab).  The hover text is a build product:

- in JupyterLab, the book's contents manager (``labkit.cli.lab_contents``) hands each page over
  with ``with_hover``: the link's text becomes an ``{abbr}`` whose title is the entry's first
  sentence; ``without_hover`` takes it out again before a page is saved;
- in the static book, ``myst/md-page-links.mjs`` turns the link into a reference to the entry,
  which mystmd shows with its preview.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

TERM_ROLE = re.compile(r"\{term\}`([^`<]+?)(?:\s*<([^>`]+)>)?`")
#: a glossary link with its hover text: [{abbr}`shown (hover)`](…/glossary.md#term-…)
HOVER_LINK = re.compile(r"\[\{abbr\}`([^`(]+?) \(([^`]*)\)`\]\(([^)\s]*glossary\.md)#(term-[a-z0-9-]+)\)")
#: a plain glossary link, as pages write it: [shown](…/glossary.md#term-…)
PLAIN_LINK = re.compile(r"\[([^\]`()\[{]+)\]\(([^)\s]*glossary\.md)#(term-[a-z0-9-]+)\)")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def html_id(term: str) -> str:
    """The anchor mystmd gives a glossary term: ``term-`` and the lower-cased words joined by ``-``."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def glossary_entries(path: Path) -> dict[str, str]:
    """Term → definition (Markdown, one line) of the ``{glossary}`` block of the page at ``path``."""
    text = Path(path).read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.S)
    if block is None:
        raise ValueError(f"{path} has no {{glossary}} block")
    entries: dict[str, str] = {}
    term = None
    for line in block.group(1).splitlines():
        if line.startswith(": ") and term:
            entries[term] = line[2:].strip()
        elif line.startswith("  ") and term in entries:
            entries[term] += " " + line.strip()
        elif line.strip():
            term = line.strip()
    return entries


def plain(markdown: str) -> str:
    """Markdown of a definition as plain text: roles, code and emphasis unwrapped."""
    text = TERM_ROLE.sub(lambda m: m.group(1).strip(), markdown)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\*\*?([^*]+)\*\*?", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def summary(definition: str) -> str:
    """The hover text: the definition's first English sentence (a leading label such as
    "Masked CE." or the Chinese term skipped).  An ``{abbr}`` title cannot hold parentheses:
    a call's ``min(1, p/q)`` becomes ``min[1, p/q]``, an aside in parentheses is dropped."""
    text = plain(definition)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    english = [s for s in sentences if not _CJK.search(s)] or sentences
    if len(english) > 1 and len(english[0].split()) < 4:
        english = english[1:]
    first = english[0]
    inner = re.compile(r"(\s*)\(([^()]*)\)")
    while inner.search(first):
        first = inner.sub(lambda m: "" if m.group(1) or m.start() == 0 else f"[{m.group(2)}]", first)
    first = first.replace("(", "").replace(")", "").replace("`", "")
    return re.sub(r"\s+([,;.])", r"\1", first).strip()


@cache
def _hovers(glossary: Path, version: tuple[int, int]) -> dict[str, str]:
    """Anchor → hover text of the glossary at ``glossary`` (cached while the file is unchanged)."""
    return {html_id(term): summary(definition) for term, definition in glossary_entries(glossary).items()}


def hover_texts(glossary: Path) -> dict[str, str]:
    """Anchor → hover text of every entry of the glossary page at ``glossary`` (none: empty)."""
    glossary = Path(glossary).resolve()
    if not glossary.is_file():
        return {}
    stat = glossary.stat()
    return _hovers(glossary, (stat.st_mtime_ns, stat.st_size))


def with_hover(text: str, page: Path) -> str:
    """``text`` of the page at ``page`` with each glossary link's text wrapped in an ``{abbr}``
    holding its entry's first sentence (a link to an unknown entry is left as it is)."""

    def add(m: re.Match) -> str:
        hover = hover_texts(Path(page).parent / m.group(2)).get(m.group(3))
        if hover is None:
            return m.group(0)
        return f"[{{abbr}}`{' '.join(m.group(1).split())} ({hover})`]({m.group(2)}#{m.group(3)})"

    return PLAIN_LINK.sub(add, text)


def without_hover(text: str) -> str:
    """``text`` with every glossary link's hover text taken out again (the page as written)."""
    return HOVER_LINK.sub(lambda m: f"[{m.group(1)}]({m.group(3)}#{m.group(4)})", text)


def notebook_with_hover(notebook: dict, page: Path) -> None:
    """Give every Markdown cell of ``notebook`` (a contents model of the page at ``page``) its hover text."""
    _each_markdown_cell(notebook, lambda text: with_hover(text, page))


def notebook_without_hover(notebook: dict) -> None:
    """Take the hover text out of every Markdown cell of ``notebook`` (before it is saved)."""
    _each_markdown_cell(notebook, without_hover)


def _each_markdown_cell(notebook: dict, change) -> None:
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            cell["source"] = change("".join(source) if isinstance(source, list) else source)
