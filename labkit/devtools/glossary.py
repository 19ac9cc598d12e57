"""The check of the pages' glossary links (``python -m labkit.devtools check`` runs it).

A page links a term to its glossary entry with a plain link,
``[KV cache](../glossary.md#term-kv-cache)``; its hover text is made when the page is read
(``labkit.cli.glossary``), so no page carries one.  The glossary page itself keeps ``{term}``
(its own entries resolve everywhere).  ``problems`` names a page that still uses ``{term}``
(with the link to write instead), links an unknown entry, or carries a written hover text.
"""

from __future__ import annotations

import os
from pathlib import Path

from labkit.cli import glossary as hover
from labkit.cli.glossary import HOVER_LINK, PLAIN_LINK, TERM_ROLE, html_id, summary
from labkit.core.fixtures import book_root

__all__ = ["glossary_entries", "html_id", "link_for", "pages", "problems", "summary"]


def glossary_entries(path: Path | None = None) -> dict[str, str]:
    """Term → definition of the glossary page at ``path`` (default: the book's)."""
    return hover.glossary_entries(path or book_root() / "notebooks" / "glossary.md")


def pages(root: Path) -> list[Path]:
    """Every page source of the book at ``root`` but the glossary."""
    glossary = root / "notebooks" / "glossary.md"
    found = (root / "notebooks").rglob("*.md")
    return sorted(
        p for p in found if ".ipynb_checkpoints" not in p.parts and "players" not in p.parts and p != glossary
    )


def _lookup(entries: dict[str, str], key: str) -> str | None:
    wanted = " ".join(key.split()).lower()
    return next((term for term in entries if term.lower() == wanted), None)


def link_for(shown: str, term: str, page: Path, glossary: Path) -> str:
    """The plain link a page writes for ``term`` (shown as ``shown``)."""
    rel = Path(os.path.relpath(glossary, page.parent)).as_posix()
    return f"[{' '.join(shown.split())}]({rel}#{html_id(term)})"


def page_problems(page: Path, glossary: Path, entries: dict[str, str]) -> list[str]:
    text = page.read_text(encoding="utf-8")
    anchors = {html_id(term) for term in entries}
    found = []
    for m in TERM_ROLE.finditer(text):
        term = _lookup(entries, (m.group(2) or m.group(1)).strip())
        if term is None:
            found.append(f"no glossary entry {(m.group(2) or m.group(1)).strip()!r}")
        else:
            found.append(
                f"{m.group(0)} does not resolve in JupyterLab; write {link_for(m.group(1), term, page, glossary)}"
            )
    for m in HOVER_LINK.finditer(text):
        found.append(f"{m.group(0)[:60]}… carries hover text (a build product); write [{m.group(1)}]({m.group(3)}#…)")
    found += [f"no glossary entry {m.group(3)!r}" for m in PLAIN_LINK.finditer(text) if m.group(3) not in anchors]
    return found


def problems(root: Path | None = None, entries: dict[str, str] | None = None) -> list[str]:
    """Every problem of the glossary links of the book at ``root`` (``entries``: the glossary's)."""
    root = book_root(root)
    glossary = root / "notebooks" / "glossary.md"
    entries = glossary_entries(glossary) if entries is None else entries
    found = []
    for page in pages(root):
        rel = page.relative_to(root).as_posix()
        found += [f"{rel}: {line}" for line in page_problems(page, glossary, entries)]
    return found
