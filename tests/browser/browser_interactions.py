"""How each widget of the book is moved in the browser, and what must change when it is.

``INTERACTIONS`` is keyed by ``<page.md>::<expression>`` — the page's MyST source and the
last line of its ``widget`` cell (the expression JupyterLab displays).  Each entry receives a
``WidgetView`` of that cell's live output, moves the widget the way a reader would (click a
button, drag a slider, pick from a dropdown) and asserts that what the widget shows changes
as it should.  A widget cell without an entry fails ``test_every_widget_cell_has_an_interaction``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from browser_lab import cell


class WidgetView:
    """The live output of one widget cell in the open notebook."""

    def __init__(self, page, index: int, key: str):
        self.page = page
        self.index = index
        self.key = key
        self.output = cell(page, index).locator(".jp-Cell-outputArea")

    # -- what it shows ------------------------------------------------------------------
    def text(self) -> str:
        return self.output.inner_text()

    def label(self, selector: str) -> str:
        """Text of the first element matching ``selector`` inside the widget."""
        return self.output.locator(selector).first.inner_text().strip()

    def number_after(self, words: str) -> int:
        """The integer that follows ``words`` in the widget's text (e.g. "cache length")."""
        match = re.search(re.escape(words) + r"\D{0,20}?(-?\d+)", self.text(), re.IGNORECASE)
        if match is None:
            raise AssertionError(f"{self.key}: no number after {words!r} in {self.text()[:300]!r}")
        return int(match.group(1))

    def image_sources(self) -> list[str]:
        """``src`` of every image the widget shows (a figure change changes its bytes)."""
        return self.output.locator("img").evaluate_all("els => els.map(e => e.src)")

    # -- moving it ----------------------------------------------------------------------
    def click(self, button_text: str) -> None:
        self.output.locator("button", has_text=button_text).first.click()
        self.settle()

    def select(self, option_label: str, nth: int = 0) -> None:
        self.output.locator("select").nth(nth).select_option(label=option_label)
        self.settle()

    def toggle(self, button_text: str) -> None:
        """Pick one option of a ToggleButtons widget."""
        self.output.locator(".widget-toggle-button", has_text=button_text).first.click()
        self.settle()

    def drag_slider(self, fraction: float, nth: int = 0) -> None:
        """Drag the ``nth`` slider's handle to ``fraction`` (0 … 1) of its track."""
        track = self.output.locator(".widget-slider .noUi-target, .slider-container").nth(nth)
        handle = self.output.locator(".noUi-handle").nth(nth)
        box, grip = track.bounding_box(), handle.bounding_box()
        if box is None or grip is None:
            raise AssertionError(f"{self.key}: slider {nth} is not visible")
        self.page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
        self.page.mouse.down()
        self.page.mouse.move(box["x"] + fraction * box["width"], grip["y"] + grip["height"] / 2, steps=8)
        self.page.mouse.up()
        self.settle()

    def settle(self, timeout_ms: int = 30_000) -> None:
        """Wait until the kernel has answered the change (idle again)."""
        self.page.wait_for_timeout(150)
        self.page.wait_for_function(
            "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext.session;"
            " return s && s.kernel && s.kernel.status === 'idle'; }",
            timeout=timeout_ms,
        )
        self.page.wait_for_timeout(150)

    def expect(self, predicate: Callable[[], bool], what: str, timeout_ms: int = 15_000) -> None:
        """Poll ``predicate`` until it holds; fail saying ``what`` was expected and what
        the widget shows instead."""
        deadline = timeout_ms / 1000
        waited = 0.0
        while True:
            if predicate():
                return
            if waited >= deadline:
                raise AssertionError(f"{self.key}: expected {what}; the widget shows:\n{self.text()[:600]}")
            self.page.wait_for_timeout(200)
            waited += 0.2


Interaction = Callable[[WidgetView], None]

INTERACTIONS: dict[str, Interaction] = {}


def interaction(key: str):
    """Register the function below as the interaction of widget ``key``."""

    def register(fn: Interaction) -> Interaction:
        if key in INTERACTIONS:
            raise ValueError(f"two interactions registered for {key!r}")
        INTERACTIONS[key] = fn
        return fn

    return register


# ---- the book's widgets -----------------------------------------------------------------
# (entries are added as pages with widgets land; see tests/browser/README.md)
