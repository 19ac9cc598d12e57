"""Glossary terms on pages are plain links that JupyterLab and the static book both resolve; the
hover text is made when a page is read, never written into it (``booklab.glossary``,
which checks them too; ``make book-check`` checks that mystmd reaches each entry)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from booklab import glossary
from booklab.glossary import glossary_entries, html_id, summary

REPO = Path(__file__).resolve().parents[1]


def test_no_page_uses_a_term_role_or_carries_hover_text():
    assert glossary.problems(REPO) == []


def test_every_term_has_a_hover_text_an_abbr_title_can_hold():
    entries = glossary_entries()
    assert len(entries) >= 50
    for term, definition in entries.items():
        text = summary(definition)
        assert text and not set("()`") & set(text), (term, text)
        assert not glossary._CJK.search(text), (term, text)


def _book(tmp_path, page_text: str, entries: str) -> Path:
    (tmp_path / "myst.yml").write_text("version: 1\n", encoding="utf-8")
    page = tmp_path / "notebooks" / "11-labs" / "x.md"
    page.parent.mkdir(parents=True)
    page.write_text(page_text, encoding="utf-8")
    (tmp_path / "notebooks" / "glossary.md").write_text(f"```{{glossary}}\n{entries}\n```\n", encoding="utf-8")
    return page


def test_a_term_role_is_reported_with_the_link_to_write(tmp_path):
    page = _book(
        tmp_path,
        "the {term}`cache <KV cache>` and {term}`OUTCOME_UNKNOWN`\n",
        "KV cache\n: Keys (k) and values. More.\n\nOUTCOME_UNKNOWN\n: A state.",
    )
    problems = glossary.problems(tmp_path)
    assert len(problems) == 2 and all("{term}" in p for p in problems), problems
    assert "[cache](../glossary.md#term-kv-cache)" in problems[0]
    assert "#term-outcome-unknown)" in problems[1]
    written = page.read_text(encoding="utf-8").replace(
        "{term}`cache <KV cache>`", "[cache](../glossary.md#term-kv-cache)"
    )
    text = glossary.with_hover(written, page)
    assert "[{abbr}`cache (Keys and values.)`](" in text and "glossary.md#term-kv-cache)" in text
    assert html_id("Box–Muller transform") == "term-box-muller-transform"


def test_an_unknown_term_is_reported_and_left_alone(tmp_path):
    page = _book(tmp_path, "a {term}`nonsense` and [that](../glossary.md#term-nothing)\n", "trace\n: One run.")
    problems = glossary.problems(tmp_path)
    assert any("no glossary entry 'nonsense'" in p for p in problems), problems
    assert any("no glossary entry 'term-nothing'" in p for p in problems), problems
    text = page.read_text(encoding="utf-8")
    assert glossary.with_hover(text, page) == text and "{term}`nonsense`" in text


def test_hover_text_written_into_a_page_makes_the_check_fail(tmp_path):
    page = _book(tmp_path, "the [trace](../glossary.md#term-trace).\n", "trace\n: One run of one generation. More.")
    assert glossary.problems(tmp_path) == []
    page.write_text(glossary.with_hover(page.read_text(encoding="utf-8"), page), encoding="utf-8")
    assert "{abbr}`trace (One run of one generation.)`" in page.read_text(encoding="utf-8")
    assert any("hover text" in p for p in glossary.problems(tmp_path))


def test_a_changed_definition_changes_the_hover_text_on_the_next_read(tmp_path):
    page = _book(tmp_path, "the [trace](../glossary.md#term-trace).\n", "trace\n: One run of one generation. More.")
    assert "(One run of one generation.)" in glossary.with_hover(page.read_text(encoding="utf-8"), page)
    glossary_md = tmp_path / "notebooks" / "glossary.md"
    glossary_md.write_text("```{glossary}\ntrace\n: A different first sentence. More.\n```\n", encoding="utf-8")
    assert "(A different first sentence.)" in glossary.with_hover(page.read_text(encoding="utf-8"), page)


def test_every_page_round_trips_through_its_hover_text():
    for page in glossary.pages(REPO):
        text = page.read_text(encoding="utf-8")
        shown = glossary.with_hover(text, page)
        assert glossary.without_hover(shown) == text, page
    preface = REPO / "notebooks" / "00-preface.md"
    assert "{abbr}`" in glossary.with_hover(preface.read_text(encoding="utf-8"), preface)


def test_jupyterlab_shows_the_hover_text_and_saves_the_page_without_it(tmp_path):
    """The book's contents manager: a page read has its hover text; saved unedited it is still the
    book's page (no working copy), saved edited its working copy holds no hover text."""
    from booklab.contents import BookContentsManager
    from booklab.edits import working_copy

    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns("players"))
    shutil.copy(REPO / "myst.yml", tmp_path / "myst.yml")
    manager = BookContentsManager(root_dir=str(tmp_path))
    path = "notebooks/00-preface.md"
    written = (tmp_path / path).read_text(encoding="utf-8")
    model = asyncio.run(manager.get(path, content=True, type="notebook"))
    cells = [c for c in model["content"]["cells"] if c["cell_type"] == "markdown"]
    assert "[{abbr}`execution traces (" in "".join(c["source"] for c in cells)
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]}, path))
    copy = working_copy(tmp_path / path)
    assert not copy.exists(), "an unedited page with its hover text counted as an edit"
    assert (tmp_path / path).read_text(encoding="utf-8") == written
    model = asyncio.run(manager.get(path, content=True, type="notebook"))
    model["content"]["cells"][0]["source"] += "\nA reader's note.\n"
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]}, path))
    saved = copy.read_text(encoding="utf-8")
    assert "A reader's note." in saved and "{abbr}" not in saved
    assert "[execution traces](glossary.md#term-trace)" in saved
