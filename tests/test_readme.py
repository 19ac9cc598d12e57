"""The README is valid CommonMark as GitHub renders it: every code fence closes where it is
meant to, and the sections are headings, not text swallowed by a code block."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]


def fence_problems(text: str) -> list[str]:
    """Fences that run to the end of the document, or hold a line that looks like their close."""
    lines = text.splitlines()
    problems = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence":
            continue
        start, end = token.map
        closing = lines[end - 1].strip() if end - 1 > start else ""
        if not (closing.startswith(token.markup) and set(closing) == {token.markup[0]}):
            problems.append(f"line {start + 1}: the {token.markup} fence is never closed")
        for number, line in enumerate(lines[start + 1 : end - 1], start=start + 2):
            if line.lstrip().startswith(token.markup):
                problems.append(f"line {number}: {line.strip()[:40]!r} does not close the fence of line {start + 1}")
    return problems


def headings(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_a_fence_closed_with_text_after_it_is_caught():
    broken = "# Title\n\n```bash\nmake lab\n``` (a note)\n\n## Contents\n"
    assert fence_problems(broken) and "Contents" not in headings(broken)
    assert fence_problems("```\nnever closed\n")
    assert not fence_problems("```bash\nmake lab\n```\n\n    indented code\n")


def test_the_readme_is_valid_commonmark():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert fence_problems(text) == []
    found = headings(text)
    for section in ("Contents", "Commands", "Teaching with the book", "A reader's edits and resetting a page"):
        assert section in found, f"README: {section!r} is not a heading (inside a code block?); headings: {found}"
