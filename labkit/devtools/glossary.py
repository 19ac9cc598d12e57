"""Glossary links that work in JupyterLab and in the static book.

A page cannot use ``{term}`` for a term defined on the glossary page: jupyterlab-myst
resolves references inside one notebook only, so every such term showed "⚠ term-…" and
logged "Cross reference target was not found".  A page links the term instead::

    [{abbr}`KV cache (The keys and values of every position already processed, …)`](../glossary.md#term-kv-cache)

- in JupyterLab, hovering shows the entry's first sentence (the ``{abbr}`` popover) and a
  click opens the glossary page;
- in the static book, ``glossary.md#term-kv-cache`` becomes ``glossary.ipynb#term-kv-cache``
  (``myst/md-page-links.mjs``), which mystmd resolves to the glossary entry, with its preview.

The glossary page itself keeps ``{term}`` (its own entries resolve everywhere).  ``links``
rewrites every other page's ``{term}`` into such a link and refreshes the hover text of
existing links from the glossary; ``check`` fails when a page still uses ``{term}``, links
an unknown term or carries a stale hover text.

    python -m labkit.devtools.glossary links [PAGE.md ...]
    python -m labkit.devtools.glossary check
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
GLOSSARY = NOTEBOOKS / "glossary.md"

TERM_ROLE = re.compile(r"\{term\}`([^`<]+?)(?:\s*<([^>`]+)>)?`")
TERM_LINK = re.compile(r"\[\{abbr\}`([^`(]+?) \(([^`]*)\)`\]\(([^)\s]*glossary\.md)#(term-[a-z0-9-]+)\)")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def html_id(term: str) -> str:
    """The anchor mystmd gives a glossary term: ``term-`` and the lower-cased words joined by ``-``."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def glossary_entries(path: Path = GLOSSARY) -> dict[str, str]:
    """Term → definition (Markdown, one line) of the ``{glossary}`` block."""
    text = path.read_text(encoding="utf-8")
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


def _lookup(entries: dict[str, str], key: str) -> str | None:
    wanted = " ".join(key.split()).lower()
    for term in entries:
        if term.lower() == wanted:
            return term
    return None


def link(text: str, term: str, definition: str, glossary_rel: str) -> str:
    return f"[{{abbr}}`{' '.join(text.split())} ({summary(definition)})`]({glossary_rel}#{html_id(term)})"


def glossary_rel(page: Path) -> str:
    return Path(os.path.relpath(GLOSSARY, page.parent)).as_posix()


def rewrite(page: Path, entries: dict[str, str]) -> tuple[str, list[str]]:
    """``page``'s text with every ``{term}`` linked and every hover text refreshed."""
    text = page.read_text(encoding="utf-8")
    rel = glossary_rel(page)
    unknown: list[str] = []

    def from_role(m: re.Match) -> str:
        shown, key = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
        term = _lookup(entries, key)
        if term is None:
            unknown.append(key)
            return m.group(0)
        return link(shown, term, entries[term], rel)

    def from_link(m: re.Match) -> str:
        term = next((t for t in entries if html_id(t) == m.group(4)), None)
        if term is None:
            unknown.append(m.group(4))
            return m.group(0)
        return link(m.group(1), term, entries[term], rel)

    return TERM_LINK.sub(from_link, TERM_ROLE.sub(from_role, text)), unknown


def pages(root: Path = NOTEBOOKS) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if ".ipynb_checkpoints" not in p.parts and p != GLOSSARY)


def problems(root: Path = NOTEBOOKS) -> list[str]:
    entries = glossary_entries()
    found = []
    for page in pages(root):
        rel = page.relative_to(REPO).as_posix()
        text = page.read_text(encoding="utf-8")
        for m in TERM_ROLE.finditer(text):
            found.append(
                f"{rel}: {m.group(0)} does not resolve in JupyterLab; run `python -m labkit.devtools.glossary links`"
            )
        new, unknown = rewrite(page, entries)
        found += [f"{rel}: no glossary entry {key!r}" for key in unknown]
        if not unknown and new != text and not TERM_ROLE.search(text):
            found.append(
                f"{rel}: a glossary link's hover text or target is stale; run "
                "`python -m labkit.devtools.glossary links`"
            )
    return found


def check(_: list[str]) -> int:
    """Print every problem of the pages' glossary links; 1 when there is one."""
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


def links(paths: list[str]) -> int:
    """Rewrite the glossary links of ``paths`` (default: every page); 1 when a term has no entry."""
    entries = glossary_entries()
    status = 0
    for page in [Path(p).resolve() for p in paths] or pages():
        new, unknown = rewrite(page, entries)
        for key in unknown:
            print(f"{page}: no glossary entry {key!r}", file=sys.stderr)
            status = 1
        if new != page.read_text(encoding="utf-8"):
            page.write_text(new, encoding="utf-8")
            print(f"linked glossary terms in {page.relative_to(REPO)}")
    return status


COMMANDS = {"links": links, "check": check}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: python -m labkit.devtools.glossary links [PAGE.md ...] | check", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
