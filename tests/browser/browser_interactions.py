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

    def choose(self, label: str) -> None:
        """Pick one option of a RadioButtons widget by its label."""
        self.output.locator(".widget-radio-box label", has_text=label).first.click()
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
# (one entry per widget cell of the book; see tests/browser/README.md)


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
    w.choose("correct")
    w.expect(lambda: "FAIL" not in w.text(), "the correct cache to pass every check")
    w.choose("copy_layer1_cache_to_layer2")
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


@interaction("notebooks/07-traces/07-tool-proposal.md::stepper")
def grammar_stepper(w: WidgetView) -> None:
    """mc_01's proposal, stepped: step 1 of 27 chooses '{"' from 2 allowed tokens; "next"
    appends calendar_id to the JSON so far and redraws; "back" returns to step 1."""
    w.expect(lambda: "step 1 of 27" in w.text(), "the grammar stepper to open at step 1 of 27")
    w.expect(lambda: 'JSON so far: {"' in w.text() and "calendar_id" not in w.text(),
             "step 1's JSON so far to be just '{\"'")
    first = w.image_sources()
    w.click("next")
    w.expect(lambda: "step 2 of 27" in w.text(), "'next' to move to step 2 of 27")
    w.expect(lambda: 'JSON so far: {"calendar_id' in w.text(), "step 2 to append calendar_id to the JSON")
    w.expect(lambda: w.image_sources() != first, "the step picture to change with the step")
    w.click("back")
    w.expect(lambda: "step 1 of 27" in w.text() and "calendar_id" not in w.text(), "'back' to return to step 1")


@interaction("notebooks/11-labs/06-dpo.md::curve")
def dpo_margin_curve(w: WidgetView) -> None:
    """Source pair: margin 0.2 and loss 0.598139.  Drag log π(rejected) to its left end
    (−10): the margin grows to 0.2·(0.5 + 7.5) = 1.6 and the loss falls to 0.183901."""
    w.expect(lambda: "margin 0.2000" in w.text() and "loss 0.598139" in w.text(),
             "the source's pair to give margin 0.2000 and loss 0.598139")
    first = w.image_sources()
    w.drag_slider(0.0, nth=1)
    w.expect(lambda: "margin 1.6000" in w.text() and "loss 0.183901" in w.text(),
             "log π(rejected) = −10 to give margin 1.6000 and loss 0.183901")
    w.expect(lambda: w.image_sources() != first, "the point on the loss curve to move")


@interaction("notebooks/11-labs/07-grpo-and-ppo-clip.md::editor")
def grpo_group_editor(w: WidgetView) -> None:
    """Group [0 0 1 1] gives advantages −1 −1 1 1; an all-equal group [1 1 1 1] gives zeros
    (no learning signal); back to [0 0 1 1] with ε dragged to 0.1 gives ±0.833333."""
    w.expect(lambda: "ddof 0: -1 -1 1 1" in w.text(), "the default group to give ddof-0 advantages -1 -1 1 1")
    rewards = w.output.locator("input[type=text]").first
    rewards.fill("1 1 1 1")
    rewards.press("Enter")
    w.settle()
    w.expect(lambda: "ddof 0: 0 0 0 0" in w.text(), "an all-equal group to give zero advantages")
    rewards.fill("0 0 1 1")
    rewards.press("Enter")
    w.settle()
    before = w.image_sources()
    w.drag_slider(1.0)
    w.expect(lambda: "ddof 0: -0.833333 -0.833333 0.833333 0.833333" in w.text(),
             "ε = 0.1 to shrink the advantages to ±0.5/0.6 = ±0.833333")
    w.expect(lambda: w.image_sources() != before, "the advantage bars to be redrawn")


@interaction("notebooks/07-traces/05-diffusion-denoising-and-decoding.md::viewer")
def latent_viewer(w: WidgetView) -> None:
    """Opens on the final state z_0 (step 4/4); dragging the DDIM-step slider to its middle
    shows z_499 after step 2, and the frame is replaced (still one picture), not appended;
    dragging guidance to 0 recomputes the run without CFG."""
    w.expect(lambda: "step 4/4 · z_0 · guidance 5" in w.text(), "the viewer to open at step 4/4, z_0, guidance 5")
    first = w.image_sources()
    w.drag_slider(0.5, nth=0)
    w.expect(lambda: "step 2/4 · z_499" in w.text(), "the DDIM step slider at its middle to show step 2/4, z_499")
    w.expect(lambda: w.image_sources() != first, "the latent frame to change with the step")
    assert len(w.image_sources()) == len(first), (
        f"the viewer shows {len(w.image_sources())} pictures after a step change, {len(first)} before: "
        "a denoising step must replace the frame, not append one"
    )
    second = w.image_sources()
    w.drag_slider(0.0, nth=1)
    w.expect(lambda: "step 2/4 · z_499 · guidance 0 " in w.text(), "guidance dragged to 0 to read 'guidance 0'")
    w.expect(lambda: w.image_sources() != second, "the frame to change without guidance", timeout_ms=60_000)


@interaction("notebooks/11-labs/09-speculative-sampling.md::sampler")
def speculative_sampler(w: WidgetView) -> None:
    """The correct residual fallback reproduces p = 0.6 0.3 0.1 exactly; ticking the wrong
    fallback (refill from p) shows the divergence 0.52 0.36 0.12; a p that does not sum to
    1 is refused with its error."""
    w.expect(lambda: "exact output = 0.6 0.3 0.1" in w.text(), "the residual fallback to output p = 0.6 0.3 0.1")
    first = w.image_sources()
    w.output.locator("input[type=checkbox]").first.check()
    w.settle()
    w.expect(lambda: "exact output = 0.52 0.36 0.12" in w.text(),
             "the wrong fallback to output 0.52 0.36 0.12 instead of p")
    w.expect(lambda: w.image_sources() != first, "the distributions to be redrawn under the wrong fallback")
    target = w.output.locator("input[type=text]").first
    target.fill("0.5 0.6")
    target.press("Enter")
    w.settle()
    w.expect(lambda: "cannot draw" in w.text() and "must sum to 1" in w.text(),
             "p = 0.5 0.6 to be refused because it does not sum to 1")


@interaction("notebooks/11-labs/10-bandwidth-budget.md::calculator")
def bandwidth_calculator(w: WidgetView) -> None:
    """The source's budget: batch 8 reads 22,589,934,592 B per step (≥ 22.590 ms); batch 1
    gives the source's other case, ≥ 15.074 ms; int8 weights (1 B/parameter) halve the
    weight bytes: ≥ 8.074 ms."""
    w.expect(lambda: "≥ 22.590 ms" in w.text(), "batch 8 to need at least 22.590 ms per step")
    first = w.image_sources()
    batch = w.output.locator(".widget-text", has_text="batch").locator("input").first
    batch.fill("1")
    batch.press("Enter")
    w.settle()
    w.expect(lambda: "≥ 15.074 ms" in w.text(), "batch 1 to need at least 15.074 ms per step")
    w.expect(lambda: w.image_sources() != first, "the budget bars to be redrawn for batch 1")
    w.select("int8/fp8: 1", nth=0)
    w.expect(lambda: "≥ 8.074 ms" in w.text() and "weights 7,000,000,000 B" in w.text(),
             "1 byte per parameter to halve the weights to 7,000,000,000 B (≥ 8.074 ms)")


@interaction("notebooks/07-traces/10-tool-failures.md::toggle")
def tool_fault_toggle(w: WidgetView) -> None:
    """The extra-field proposal first diverges from the happy path at t03; picking the
    confirmation mismatch moves the first divergence to t07, the lost response to t09."""
    w.expect(lambda: "first divergence at t03" in w.text(), "extra_field to diverge first at t03")
    first = w.image_sources()
    w.select("confirmation_mismatch", nth=0)
    w.expect(lambda: "first divergence at t07" in w.text(), "confirmation_mismatch to diverge first at t07")
    w.expect(lambda: w.image_sources() != first, "the two timelines to be redrawn for the new scenario")
    w.select("response_lost_after_commit", nth=0)
    w.expect(lambda: "first divergence at t09" in w.text(), "response_lost_after_commit to diverge first at t09")
    before = w.image_sources()
    w.select("after_journal_write", nth=1)  # left with a crash point: the screenshot shows it
    w.expect(lambda: "crash" in w.text() and w.image_sources() != before,
             "a crash after the journal write to be drawn")


@interaction("notebooks/07-traces/11-comparing-traces.md::explorer")
def divergence_explorer(w: WidgetView) -> None:
    """A perturbed weight first shows in e04's raw-logit tensors; the wrong processor order
    first shows at e05 in the discrete processor_order; switching the trace to the tool call
    resets the fault list and diverges at t01."""
    w.expect(lambda: "(e04 vs e04, prefill.completed)" in w.text() and "tensors" in w.text(),
             "perturbed_weight to diverge first at e04 prefill.completed, in its tensors")
    first = w.image_sources()
    w.select("wrong_processor_order", nth=1)
    w.expect(lambda: "(e05 vs e05, token.selected)" in w.text() and "processor_order[0]" in w.text(),
             "wrong_processor_order to diverge first at e05 token.selected, field processor_order[0]")
    w.expect(lambda: w.image_sources() != first, "the timelines to be redrawn for the new fault")
    w.select("tool", nth=0)
    w.expect(lambda: "(t01 vs t01, proposal.generated)" in w.text(),
             "the tool trace's first fault to diverge first at t01 proposal.generated")
