"""A Chinese paragraph is one line in its source: Chromium shows a line break between two Chinese
characters as a space (CSS text-autospace leaves it to the browser), so a wrapped Chinese sentence reads
“一个 词” on the site. English wraps freely; a Chinese line breaks only where a block starts."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "zh" / "notebooks").rglob("*.md"))
CELL = re.compile(r"```\{code-cell\}[^\n]*\n.*?\n```", re.S)
CJK = "[\u3000-\u303f\u3400-\u9fff\uff00-\uffef\u2014\u2026\u201c\u201d\u2018\u2019]"
BLOCK_START = re.compile(r"^\s*([-*+]\s|\d+[.)]\s|#|\||>|```|:::|\$\$|\(.+\)=|\+\+\+|:[a-z]+:|<)")


def breaks_inside_chinese(text: str) -> list[str]:
    found = []
    for prose in CELL.split(text):
        lines = prose.split("\n")
        for before, after in zip(lines, lines[1:], strict=False):
            if re.search(CJK + "$", before) and re.match(r"\s*" + CJK, after) and not BLOCK_START.match(after):
                found.append(f"{before[-12:]}⏎{after.strip()[:12]}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_chinese_sentence_is_broken_across_lines(page):
    found = breaks_inside_chinese(page.read_text(encoding="utf-8"))
    assert not found, f"{page.name}: {len(found)} line break(s) between Chinese characters, e.g. {found[:3]}"


def test_the_rule_sees_a_break_and_not_a_block():
    assert breaks_inside_chinese("第一行的结尾\n第二行的开头") == ["第一行的结尾⏎第二行的开头"]
    assert breaks_inside_chinese("一段。\n- 列表项") == [] and breaks_inside_chinese("a line\n中文") == []
