"""The reader's first hour in JupyterLab (issue 18): the preface says how to start on its
first screen and leads to the MyST pages, the file browser lists one entry per page, pages
open unmodified, and a glossary term shows its entry on hover without a console error.

(Every page's own "opens unmodified" and figure checks run with its Run All, in
``test_browser_pages.py``.)
"""

from __future__ import annotations

import re

import pytest
from browser_lab import JS_CLOSE_CURRENT, JS_CURRENT_KIND, JS_CURRENT_READY, opened_unmodified
from conftest import VIEWPORT

from booklab.glossary import glossary_entries, html_id, summary

PREFACE = "notebooks/00-preface.md"
FIRST_PAGE = "notebooks/07-traces/01-trace-record.md"
# three pages, one per part of the book, each with a glossary link in its first cells
TERM_PAGES = (
    "notebooks/07-traces/01-trace-record.md",
    "notebooks/07-traces/08-tool-proposal-to-commit.md",
    "notebooks/11-labs/09-speculative-sampling.md",
)

pytestmark = pytest.mark.browser


def test_preface_first_screen_says_how_to_start(notebooks):
    page = notebooks.open(PREFACE)
    # the rendered Markdown, not the cell's hidden source editor
    notebook = page.locator(".jp-NotebookPanel .jp-MarkdownCell")
    instruction = notebook.get_by_text(re.compile(r"Run\s*→\s*Run All Cells")).filter(visible=True).first
    box = instruction.bounding_box()
    assert box is not None, "the preface does not say Run → Run All Cells"
    assert box["y"] + box["height"] <= VIEWPORT["height"], (
        f"'Run → Run All Cells' is at y={box['y']:.0f}px, below the first screen ({VIEWPORT['height']}px)"
    )
    first = notebook.locator("a[href*='07-traces/01-trace-record.md']").filter(visible=True).first
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"], (
        "the first screen does not link the first page (07-traces/01-trace-record.md)"
    )
    assert opened_unmodified(page) == {"model": False, "dot": False}


def test_following_the_first_contents_link_opens_the_myst_page(notebooks):
    page = notebooks.open(PREFACE)
    contents = page.locator(".jp-NotebookPanel .jp-MarkdownCell h2", has_text="Contents").first
    assert contents.count(), "the preface has no Contents heading"
    links = page.locator(
        "xpath=//div[contains(@class, 'jp-MarkdownCell')]//h2[contains(., 'Contents')]/following-sibling::ul[1]//a"
    )
    hrefs = links.evaluate_all("els => els.map(e => e.getAttribute('href').split('?')[0])")
    pages = [h.split("/files/")[-1] for h in hrefs]
    assert pages and all(p.endswith(".md") for p in pages), f"contents links that are not MyST pages: {pages}"
    assert pages[0] == FIRST_PAGE, pages[:3]
    links.first.click()
    page.wait_for_function(JS_CURRENT_READY, arg=FIRST_PAGE, timeout=60_000)
    kind = page.evaluate(JS_CURRENT_KIND, FIRST_PAGE)
    assert kind["notebook"] and kind["path"] == FIRST_PAGE, kind
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current").inner_text()
    assert tab.strip().endswith(".md"), f"the page opened in a tab named {tab!r}"
    assert opened_unmodified(page) == {"model": False, "dot": False}


def test_file_browser_lists_one_entry_per_page(notebooks):
    page = notebooks.open(PREFACE)
    page.evaluate(
        "async () => { await window.jupyterapp.commands.execute("
        "'filebrowser:go-to-path', {path: 'notebooks/11-labs/'}); }"
    )
    items = page.locator(".jp-DirListing-content .jp-DirListing-itemText")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-DirListing-itemText'))"
        ".some(e => e.innerText.includes('cache-faults'))",
        timeout=20_000,
    )
    names = [n.strip() for n in items.all_inner_texts()]
    assert "05-cache-faults.md" in names, names
    assert not [n for n in names if n.endswith(".ipynb")], f"the file browser lists .ipynb files: {names}"


@pytest.mark.parametrize("page_md", TERM_PAGES)
def test_hovering_a_glossary_term_shows_its_entry(notebooks, page_md):
    # the page test has just opened and run this page in the long-lived tab: it is reused
    page = notebooks.run(page_md).page
    # rendered as …/files/notebooks/glossary.md?_xsrf=…#term-…
    link = page.locator(".jp-NotebookPanel .jp-MarkdownCell a[href*='glossary.md'][href*='#term-']").first
    link.wait_for(state="attached", timeout=10_000)
    anchor = link.get_attribute("href").split("#")[-1]
    term = next(t for t in glossary_entries() if html_id(t) == anchor)
    link.scroll_into_view_if_needed()
    link.locator("abbr").hover()
    tip = page.locator("[data-radix-popper-content-wrapper], [role=tooltip]").first
    tip.wait_for(state="visible", timeout=10_000)
    assert tip.inner_text().strip() == summary(glossary_entries()[term]), tip.inner_text()
    shown = " ".join(page.locator(".jp-NotebookPanel .jp-MarkdownCell").all_inner_texts())
    assert "⚠" not in shown, f"{page_md}: a reference shows ⚠ (unresolved)"
    errors = list(notebooks.errors)  # since the page was opened, its Run All included
    xref = [e for e in errors if "Cross reference" in e or "term-" in e]
    assert not xref, f"{page_md}: console errors: {xref}"
    assert not errors, f"{page_md}: console errors: {errors[:5]}"
    link.click()
    try:
        page.wait_for_function(JS_CURRENT_READY, arg="notebooks/glossary.md", timeout=60_000)
    finally:
        # close the glossary: the page stays the current one, run, for its widgets' tests
        page.evaluate(JS_CLOSE_CURRENT)
        page.wait_for_function(JS_CURRENT_READY, arg=page_md, timeout=20_000)
