"""Glossary terms on pages are links that JupyterLab and the static book both resolve
(``labkit.devtools.glossary``; ``make book-check`` checks that mystmd reaches each entry)."""

from __future__ import annotations

from labkit.devtools import glossary
from labkit.devtools.glossary import glossary_entries, html_id, rewrite, summary


def test_no_page_uses_a_term_role_or_a_stale_glossary_link():
    assert glossary.problems() == []


def test_every_term_has_a_hover_text_an_abbr_title_can_hold():
    entries = glossary_entries()
    assert len(entries) >= 50
    for term, definition in entries.items():
        text = summary(definition)
        assert text and not set("()`") & set(text), (term, text)
        assert not glossary._CJK.search(text), (term, text)


def test_a_term_role_becomes_a_link_to_its_entry(tmp_path):
    page = tmp_path / "notebooks" / "11-labs" / "x.md"
    page.parent.mkdir(parents=True)
    page.write_text("the {term}`cache <KV cache>` and {term}`OUTCOME_UNKNOWN`\n", encoding="utf-8")
    text, unknown = rewrite(page, {"KV cache": "Keys (k) and values. More.", "OUTCOME_UNKNOWN": "A state."})
    assert unknown == []
    assert "{term}" not in text
    assert "[{abbr}`cache (Keys and values.)`](" in text and "glossary.md#term-kv-cache)" in text
    assert "#term-outcome-unknown)" in text
    assert html_id("Box–Muller transform") == "term-box-muller-transform"


def test_an_unknown_term_is_reported_and_left_alone(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("a {term}`nonsense`\n", encoding="utf-8")
    text, unknown = rewrite(page, {"trace": "One run."})
    assert unknown == ["nonsense"] and "{term}`nonsense`" in text


def test_a_changed_definition_makes_the_check_fail(monkeypatch):
    entries = glossary_entries()
    entries["KV cache"] = "A different first sentence. More."
    monkeypatch.setattr(glossary, "glossary_entries", lambda path=None: entries)
    assert any("stale" in p for p in glossary.problems())
