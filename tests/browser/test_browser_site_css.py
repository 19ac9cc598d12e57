"""The static site's stylesheet (``myst/site.css``) on an exercise's stored check, in Chromium: the
verdict the book stored before any answer ("not yet answered", red ✘ or grey …) reads as a task to
do in JupyterLab, with no verdict mark and no red."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
CHECK = re.compile(r'<div class="labkit-check".*?</div></div>', re.S)


def stored_checks() -> list[str]:
    """Every stored check block of the pages (the HTML the static site shows)."""
    found = []
    for path in sorted((REPO / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                found += CHECK.findall("".join(output.get("data", {}).get("text/html", "")))
    return found


MEASURE = """() => [...document.querySelectorAll('.labkit-check')].map((block) => ({
  before: getComputedStyle(block, '::before').content,
  border: getComputedStyle(block).borderLeftColor,
  text: block.innerText,
}))"""


def test_a_stored_check_reads_as_a_task_to_do_in_jupyterlab(browser):
    blocks = stored_checks()
    assert len(blocks) >= 20, "the pages store fewer check outputs than expected"
    css = (REPO / "myst" / "site.css").read_text(encoding="utf-8")
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><html><head><style>{css}</style></head><body>{''.join(blocks)}</body></html>")
        seen = page.evaluate(MEASURE)
    finally:
        page.close()
    assert len(seen) == len(blocks)
    for block in seen:
        assert "Your turn, in JupyterLab" in block["before"], block
        assert block["border"] == "rgb(9, 105, 218)", block  # blue, never the failure's red
        assert "✘" not in block["text"] and "…" not in block["text"].split(":")[0], block
