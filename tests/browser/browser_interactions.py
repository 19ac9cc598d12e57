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
        track = self.output.locator(".widget-slider .noUi-target").nth(nth)
        handle = self.output.locator(".widget-slider .noUi-handle").nth(nth)
        track.scroll_into_view_if_needed()
        box, grip = track.bounding_box(), handle.bounding_box()
        if box is None or grip is None:
            raise AssertionError(f"{self.key}: slider {nth} is not visible")
        y = grip["y"] + grip["height"] / 2
        self.page.mouse.move(grip["x"] + grip["width"] / 2, y)
        self.page.mouse.down()
        x = box["x"] + min(max(fraction, 0.0), 1.0) * (box["width"] - 1)
        self.page.mouse.move(x, y, steps=8)
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


@interaction("notebooks/11-labs/02-masks-and-packing.md::viewer")
def mask_viewer(w: WidgetView) -> None:
    """Pack the two documents into one: the A-EOS → B-BOS prediction becomes supervised,
    so position 3 joins the supervised positions and the picture changes; then a typo in
    the IDs is refused with its error, not drawn."""
    w.expect(lambda: "supervised positions [0, 1, 2, 4, 5, 6]" in w.text(),
             "the default packed row to supervise positions [0, 1, 2, 4, 5, 6]")
    before = w.image_sources()
    ids = w.output.locator("input[type=text]").first
    ids.fill("0 0 0 0 0 0 0 0")
    ids.press("Enter")
    w.settle()
    w.expect(lambda: "supervised positions [0, 1, 2, 3, 4, 5, 6]" in w.text(),
             "one document of eight tokens to supervise positions [0, 1, 2, 3, 4, 5, 6]")
    w.expect(lambda: w.image_sources() != before, "the mask picture to be redrawn")
    ids.fill("0 0 x")
    ids.press("Enter")
    w.settle()
    w.expect(lambda: "cannot draw" in w.text() and "document IDs must be" in w.text(),
             "the bad IDs '0 0 x' to be refused with an error naming the document IDs")


@interaction("notebooks/11-labs/03-causal-attention.md::heatmap")
def attention_heatmap(w: WidgetView) -> None:
    """Drag the cached-tokens slider from 3 to the far right (6): the readout and the heatmap
    change; then pick the faulty top-left rectangular mask: the heatmap changes again."""
    readout = ".widget-readout"
    w.expect(lambda: w.label(readout) == "3", "the cached slider to start at 3")
    first = w.image_sources()
    w.drag_slider(1.0)
    w.expect(lambda: w.label(readout) == "6", "the cached slider to read 6 after a drag to its end")
    w.expect(lambda: w.image_sources() != first, "the heatmap to be redrawn for 6 cached tokens")
    second = w.image_sources()
    w.toggle("top-left rectangular")
    w.expect(lambda: w.image_sources() != second, "the heatmap to be redrawn under the top-left mask")


@interaction("notebooks/11-labs/05-cache-faults.md::toggles")
def cache_fault_toggles(w: WidgetView) -> None:
    """The default fault (reset_rope_position) fails the logit check; 'correct' passes all
    three; copying layer 1's cache into layer 2 fails the distinct-layer check."""

    def verdict(check: str) -> str:
        row = w.output.locator("tr", has_text=check).first.inner_text()
        return "FAIL" if "FAIL" in row else "pass" if "pass" in row else row

    w.expect(lambda: verdict("logit") == "FAIL", "the default reset_rope_position to FAIL the logit check")
    w.toggle("correct")
    w.expect(lambda: "FAIL" not in w.text(), "the correct cache to pass every check")
    w.toggle("copy_layer1_cache_to_layer2")
    w.expect(lambda: verdict("distinct_layer") == "FAIL",
             "copying layer 1's cache into layer 2 to FAIL the distinct-layer check")


@interaction("notebooks/07-traces/03-text-token-by-token.md::stepper")
def decode_stepper(w: WidgetView) -> None:
    """§7.4's selection ledger, clicked through: step 1 starts with cache length 12 and
    selects 14; "next" moves to step 2, where the cache is 13 and 15 is selected; at step 5
    EOS (18) is selected with the cache still 16 and "next" is disabled; "back" returns."""
    w.expect(lambda: "selection step 1 of 5" in w.text(), "the stepper to open at selection step 1 of 5")
    assert w.number_after("cache length at step start:") == 12, w.text()[:400]
    first = w.image_sources()
    w.click("next")
    w.expect(lambda: "selection step 2 of 5" in w.text(), "'next' to move to selection step 2")
    w.expect(lambda: w.number_after("cache length at step start:") == 13,
             "the cache length at step start to go 12 → 13")
    assert w.number_after("selected:") == 15, f"step 2 selects {w.number_after('selected:')}, expected 15"
    w.expect(lambda: w.image_sources() != first, "the step picture to change with the step")
    for _ in range(3):
        w.click("next")
    w.expect(lambda: "selection step 5 of 5" in w.text(), "three more clicks to reach step 5")
    assert w.number_after("selected:") == 18, f"step 5 selects {w.number_after('selected:')}, expected EOS 18"
    assert w.number_after("cache length at step start:") == 16, w.text()[:400]
    assert w.output.locator("button", has_text="next").first.is_disabled(), "'next' is still enabled at the last step"
    w.click("back")
    w.expect(lambda: "selection step 4 of 5" in w.text() and w.number_after("cache length at step start:") == 15,
             "'back' to return to step 4 with cache length 15")
