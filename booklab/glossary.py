"""The glossary's links: hover text made when a page is read, and the check of the pages' links.

A page links a term with a plain link, ``[KV cache](../glossary.md#term-kv-cache)`` (``{term}``
does not resolve across pages in JupyterLab).  The hover text is a build product: the book's
contents manager (``booklab.contents``) wraps the link's text in an ``{abbr}`` holding the
entry's first sentence as a page is read (``with_hover``) and takes it out before a save
(``without_hover``); the static book's ``myst/md-page-links.mjs`` makes the link a reference.
``problems`` (``python -m booktools check``) names a page that uses ``{term}``, links an
unknown entry, or carries a written hover text.
"""

from __future__ import annotations

import os
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


def glossary_entries(path: Path | None = None) -> dict[str, str]:
    """Term → definition (Markdown, one line) of the ``{glossary}`` block of the page at ``path``
    (default: the book's glossary)."""
    from labkit.core.fixtures import book_root

    path = path or book_root() / "notebooks" / "glossary.md"
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


def with_hover(text: str, page: Path) -> str:
    """``text`` of the page at ``page`` with each glossary link's text wrapped in an ``{abbr}``
    holding its entry's first sentence (a link to an unknown entry or glossary is left as it is)."""

    def add(m: re.Match) -> str:
        glossary = (Path(page).parent / m.group(2)).resolve()
        stat = glossary.stat() if glossary.is_file() else None
        hover = stat and _hovers(glossary, (stat.st_mtime_ns, stat.st_size)).get(m.group(3))
        if hover is None:
            return m.group(0)
        return f"[{{abbr}}`{' '.join(m.group(1).split())} ({hover})`]({m.group(2)}#{m.group(3)})"

    return PLAIN_LINK.sub(add, text)


def without_hover(text: str) -> str:
    """``text`` with every glossary link's hover text taken out again (the page as written)."""
    return HOVER_LINK.sub(lambda m: f"[{m.group(1)}]({m.group(3)}#{m.group(4)})", text)


def change_markdown(notebook: dict, change) -> None:
    """Replace the source of every Markdown cell of ``notebook`` (a contents model) by ``change(source)``."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell["source"] = change("".join(cell.get("source", "")))  # a list of lines or one string


def pages(root: Path) -> list[Path]:
    """Every page source of the book at ``root`` but the glossary."""
    glossary = root / "notebooks" / "glossary.md"
    found = (p for p in (root / "notebooks").rglob("*.md") if p != glossary)
    return sorted(p for p in found if ".ipynb_checkpoints" not in p.parts and "players" not in p.parts)


def page_problems(page: Path, glossary: Path, entries: dict[str, str]) -> list[str]:
    text = page.read_text(encoding="utf-8")
    anchors = {html_id(term) for term in entries}
    found = []
    for m in TERM_ROLE.finditer(text):
        key = (m.group(2) or m.group(1)).strip()
        term = next((term for term in entries if term.lower() == " ".join(key.split()).lower()), None)
        if term is None:
            found.append(f"no glossary entry {key!r}")
            continue
        rel = Path(os.path.relpath(glossary, page.parent)).as_posix()
        link = f"[{' '.join(m.group(1).split())}]({rel}#{html_id(term)})"  # the plain link the page writes
        found.append(f"{m.group(0)} does not resolve in JupyterLab; write {link}")
    for m in HOVER_LINK.finditer(text):
        found.append(f"{m.group(0)[:60]}… carries hover text (a build product); write [{m.group(1)}]({m.group(3)}#…)")
    found += [f"no glossary entry {m.group(3)!r}" for m in PLAIN_LINK.finditer(text) if m.group(3) not in anchors]
    return found


def problems(root: Path) -> list[str]:
    """Every problem of the glossary links of the book at ``root``."""
    glossary = root / "notebooks" / "glossary.md"
    entries = glossary_entries(glossary)
    found = []
    for page in pages(root):
        rel = page.relative_to(root).as_posix()
        found += [f"{rel}: {line}" for line in page_problems(page, glossary, entries)]
    return found
