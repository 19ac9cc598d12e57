"""The browser suite covers the whole book: every toc notebook and every widget cell.

These checks need no browser and also run under ``make test``, so a page or a widget added
without a browser interaction fails there first.
"""

from __future__ import annotations

from browser_book import WidgetCell, all_pages, notebook_sources_on_disk, toc_notebook_sources
from browser_interactions import INTERACTIONS


def uncovered(widgets: list[WidgetCell], registry: dict) -> tuple[list[str], list[str]]:
    """(widget keys with no interaction, interactions whose widget no longer exists)."""
    keys = [w.key for w in widgets]
    return sorted(set(keys) - set(registry)), sorted(set(registry) - set(keys))


def test_every_notebook_on_disk_is_a_toc_page_the_suite_opens():
    opened = set(toc_notebook_sources())
    missing = [md for md in notebook_sources_on_disk() if md not in opened]
    assert not missing, (
        f"{len(missing)} notebook(s) are not in myst.yml's toc, so the browser suite never opens them: {missing}"
    )


def test_every_widget_cell_has_an_interaction():
    widgets = [w for page in all_pages() for w in page.widgets]
    missing, stale = uncovered(widgets, INTERACTIONS)
    assert not missing, (
        f"{len(missing)} widget cell(s) have no browser interaction in tests/browser/browser_interactions.py: {missing}"
    )
    assert not stale, f"interactions registered for widgets that no page has: {stale}"


def test_widget_names_are_unique_within_a_page():
    for page in all_pages():
        keys = [w.key for w in page.widgets]
        duplicated = sorted({k for k in keys if keys.count(k) > 1})
        assert not duplicated, f"{page.md}: two widget cells end with the same expression {duplicated}"


def test_uncovered_reports_a_missing_and_a_stale_widget():
    """The coverage check itself can fail: a widget without interaction and an interaction
    without widget are both reported."""
    widgets = [WidgetCell("notebooks/x.md", 3, "stepper"), WidgetCell("notebooks/x.md", 5, "viewer")]
    registry = {"notebooks/x.md::stepper": None, "notebooks/y.md::gone": None}
    assert uncovered(widgets, registry) == (["notebooks/x.md::viewer"], ["notebooks/y.md::gone"])
