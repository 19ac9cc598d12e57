"""Every widget of the book, moved in the browser: each cell tagged ``widget`` on a toc page
has an entry in ``browser_interactions.INTERACTIONS`` that moves it and checks the change."""

from __future__ import annotations

import pytest
from browser_book import toc_pages
from browser_interactions import INTERACTIONS, WidgetView
from conftest import SCREENSHOTS

WIDGETS = [w for page in toc_pages() for w in page.widgets]

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("widget", WIDGETS, ids=[w.key for w in WIDGETS])
def test_widget_moves_and_shows_the_change(notebooks, widget):
    move = INTERACTIONS.get(widget.key)
    assert move is not None, f"{widget.key}: no interaction in tests/browser/browser_interactions.py"
    run = notebooks.run(widget.page)
    assert run.problems == [], f"{widget.page}: Run All left problems: {run.problems}"
    view = WidgetView(run.page, widget.index, widget.key)
    view.output.locator(".jupyter-widgets").first.wait_for(state="visible", timeout=20_000)
    move(view)
    # the widget as the interaction left it, for a reader's eye (browser-screenshots/widgets/)
    shots = SCREENSHOTS / "widgets"
    shots.mkdir(parents=True, exist_ok=True)
    name = widget.key.removeprefix("notebooks/").replace(".md::", "__").replace("/", "__")
    view.output.screenshot(path=str(shots / f"{name}.png"))
