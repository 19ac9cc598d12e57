"""A Chinese page in the book's JupyterLab, as its reader runs it (issue 46): opened from its MyST
source in zh/, Run All, no error; the kernel finds the edition from the page's folder, so the
exercise verdicts and the player speak Chinese while every code cell is the English page's."""

from __future__ import annotations

import re

import pytest
from browser_lab import cell

pytestmark = pytest.mark.browser
PAGE = "zh/notebooks/11-labs/06-dpo.md"  # a player (dpo_margin) and exercises
CHINESE = re.compile("[\u4e00-\u9fff]")


def test_a_chinese_page_runs_and_its_player_and_verdicts_speak_chinese(notebooks):
    run = notebooks.run(PAGE)
    assert run.problems == [], f"{PAGE}: Run All left problems: {run.problems}"
    title = run.page.locator(".jp-NotebookPanel .jp-MarkdownCell h1").first.inner_text()
    assert CHINESE.search(title), f"{PAGE}: the title is not Chinese: {title!r}"
    player = run.page.locator(".jp-OutputArea-output .lk-player").first
    player.wait_for(state="visible", timeout=20_000)
    words = player.inner_text()
    assert CHINESE.search(words), f"{PAGE}: the player shows no Chinese: {words[:200]!r}"
    verdicts = run.page.locator(".jp-OutputArea-output .labkit-check").all_inner_texts()
    assert verdicts and all(CHINESE.search(v) for v in verdicts), f"{PAGE}: verdicts not in Chinese: {verdicts}"
    assert cell(run.page, 0).locator(".jp-InputArea").count() == 1
