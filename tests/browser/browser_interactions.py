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

from browser_book import REPO
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

    def choose(self, label: str) -> None:
        """Pick one option of a RadioButtons widget by its label."""
        self.output.locator(".widget-radio-box label", has_text=label).first.click()
        self.settle()

    def enter(self, field, text: str) -> None:
        """Type ``text`` into a text ``field`` (a locator) and press Enter."""
        field.fill(text)
        field.press("Enter")
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

    def expect_refused(self, error: str, what: str) -> None:
        """Expect the widget to refuse its input: "cannot draw" and ``error`` in its text."""
        self.expect(lambda: "cannot draw" in self.text() and error in self.text(), what)


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
# (one entry per widget cell of the book; see tests/browser/README.md)


# ---- the players (anywidget modules drawn in the browser; see test_browser_players.py) ----
PLAYER_TIMES = REPO / "build" / "browser" / "player-times.json"
LAB_FRAME_MS = 50.0


def player_cells(root=REPO) -> list[str]:
    """The widget cells that are a page's live player: the code cell just before the page's
    ``{anywidget}`` directive (the static book's copy of the same player)."""
    import jupytext
    from browser_book import all_pages

    found = []
    for page in all_pages(root):
        cells = jupytext.read(root / page.md).cells
        for w in page.widgets:
            after = cells[w.index + 1] if w.index + 1 < len(cells) else None
            if after is not None and after.source.lstrip().startswith("```{anywidget}"):
                found.append(w.key)
    return found


JS_NOTEBOOK = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  return {active: nb.activeCellIndex, mode: nb.mode,
          editing: nb.widgets.filter(c => c.model.type === 'markdown' && !c.rendered).length}; }"""


def keyboard_stays_in_the_player(w: WidgetView) -> None:
    """As a reader does: click into the player (JupyterLab selects its cell), then the arrows on
    the player and on its slider step it and leave the cell selection alone; Enter on a player
    button presses it and opens no cell for editing."""
    from player_controls import press

    root = w.output.locator(".lk-player").first
    root.click(position={"x": 4, "y": 4})
    notebook = w.page.evaluate(JS_NOTEBOOK)
    assert press(w.page, "ArrowRight") or press(w.page, "ArrowLeft"), f"{w.key}: the arrow keys did not step the player"
    assert w.page.evaluate(JS_NOTEBOOK) == notebook, f"{w.key}: an arrow key on the player reached JupyterLab"
    slider = root.locator("input[type=range]")
    if slider.count():
        slider.first.focus()
        assert press(w.page, "ArrowLeft") or press(w.page, "ArrowRight"), f"{w.key}: the slider ignored the arrows"
        assert w.page.evaluate(JS_NOTEBOOK) == notebook, f"{w.key}: an arrow key on the slider reached JupyterLab"
    buttons = root.locator("button[data-control]:not([disabled])")
    if buttons.count():
        buttons.first.click()
        w.page.keyboard.press("Enter")
        w.page.wait_for_timeout(200)
        assert w.page.evaluate(JS_NOTEBOOK) == notebook, f"{w.key}: Enter on a player button reached JupyterLab"


def player(w: WidgetView) -> None:
    """The interaction of a player cell: the same checks as the static harness (the source's
    numbers), every control changes the drawing (a kernel-backed one once the kernel has
    re-run the computation), and a step drawn in ≤ 50 ms median inside JupyterLab."""
    import json

    from player_controls import embed_key, every_control_changes_the_drawing, step_controls, step_times
    from test_browser_players import check, pick

    root = w.output.locator(".lk-player").first
    try:
        root.wait_for(state="visible", timeout=30_000)
    except Exception:
        w.output.screenshot(path=str(REPO / "build" / "browser" / f"{w.key.rsplit('::', 1)[-1]}-output.png"))
        raise AssertionError(f"{w.key}: no player drawn; the output shows:\n{w.text()[:500]}") from None
    root.evaluate("el => { window.playerEl = el.parentElement; }")
    name = root.get_attribute("data-player")
    view = """() => { const c = window.playerEl.querySelector('select[data-control]');
      return c && [c.dataset.control, c.value]; }"""
    opened = w.page.evaluate(view)
    check(name)(w.page)
    if opened and w.page.evaluate(view) != opened:  # back to the view this page opens on
        pick(w.page, *opened)
    control, back = step_controls(w.page)
    measured = step_times(w.page, control, back)
    old = json.loads(PLAYER_TIMES.read_text()) if PLAYER_TIMES.exists() else {}
    PLAYER_TIMES.parent.mkdir(parents=True, exist_ok=True)
    page_md = w.key.split("::")[0]
    entry = {**measured, "page": page_md, "control": control}
    times = {**old, f"lab/{embed_key(page_md, name)}": entry}
    PLAYER_TIMES.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
    assert measured["work_ms"] <= LAB_FRAME_MS, (
        f"{w.key}: median {measured['work_ms']:.1f} ms per step in JupyterLab (> {LAB_FRAME_MS} ms)"
    )
    keyboard_stays_in_the_player(w)
    changed = every_control_changes_the_drawing(w.page, wait_ms=60_000)
    assert changed and all(changed.values()), f"{w.key}: controls that did not change the drawing: {changed}"


for _key in player_cells():
    interaction(_key)(player)
