"""The players in Chromium, without Jupyter: each module loaded as the static book's
``{anywidget}`` directive loads it (``player_harness``), with the JSON model the page embeds.

Every player renders; every control changes what is drawn; a step is drawn within one frame
(median ≤ 16 ms from the event to the new picture laid out); and with the network closed
except 127.0.0.1 no player asks for anything beyond its module and its page's model.
The step times go to ``build/browser/player-times.json`` (``benchmarks/players.py`` reads it).
"""

from __future__ import annotations

import json

import pytest
from browser_book import REPO
from player_controls import (
    embed_key,
    every_control_changes_the_drawing,
    keyboard_alone,
    operate,
    step_controls,
    step_times,
    text,
)
from player_harness import HarnessServer, embeds

pytestmark = pytest.mark.browser

EMBEDS = embeds()
IDS = [embed_key(page, name) for page, name in EMBEDS]
FRAME_MS = 16.0
TIMES = REPO / "build" / "browser" / "player-times.json"


@pytest.fixture(scope="module")
def harness():
    with HarnessServer() as server:
        yield server


@pytest.fixture(scope="module")
def times():
    found: dict = {}
    yield found
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(TIMES.read_text()) if TIMES.exists() else {}
    TIMES.write_text(json.dumps({**old, **found}, indent=1, sort_keys=True) + "\n")


def open_player(context, harness, page_md: str, name: str):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(harness.url(page_md, name))
    page.wait_for_function("() => window.playerReady || window.playerError", timeout=20_000)
    problem = page.evaluate("() => window.playerError || null")
    assert problem is None, f"{name}: the module failed to load or render:\n{problem}"
    return page, errors


#: loaded before any player: every fillText on a canvas records its font size in the canvas's own
#: pixels (the font's px times the context's scale), the smallest per canvas, so the layout test
#: can say how large a canvas's text is on screen (times the canvas's displayed / own width)
JS_CANVAS_TEXT = """(() => {
  const smallest = window.canvasTextPx = new WeakMap();
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    const t = this.getTransform(), px = parseFloat((this.font.match(/([\\d.]+)px/) || [])[1]) * Math.hypot(t.a, t.b);
    if (String(text).trim() && !(smallest.get(this.canvas) <= px)) smallest.set(this.canvas, px);
    return fill.call(this, text, ...rest);
  };
})();"""


@pytest.fixture()
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US", timezone_id="UTC")
    ctx.add_init_script(JS_CANVAS_TEXT)
    yield ctx
    ctx.close()


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_renders_and_every_control_changes_the_drawing(context, harness, page_md, name):
    page, errors = open_player(context, harness, page_md, name)
    drawn = page.evaluate("() => window.playerEl.querySelectorAll('svg *, canvas, img').length")
    assert drawn >= 5, f"{name}: the player drew {drawn} SVG/canvas/image elements"
    changed = every_control_changes_the_drawing(page)
    assert changed, f"{name}: the player has no controls"
    assert all(changed.values()), (
        f"{name}: controls that did not change the drawing: {[c for c, ok in changed.items() if not ok]}"
    )
    assert errors == [], f"{name}: console errors: {errors}"
    check(name)(page)


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_a_step_is_drawn_within_one_frame(context, harness, times, page_md, name):
    page, _ = open_player(context, harness, page_md, name)
    key = embed_key(page_md, name)
    control, back = step_controls(page)
    operate(page, control)  # warm up: the first draw of the code paths
    measured = step_times(page, control, back)
    times[f"harness/{key}"] = {**measured, "page": page_md, "control": control}
    assert measured["work_ms"] <= FRAME_MS, (
        f"{name}: median {measured['work_ms']:.1f} ms from {control!r} to the new picture (> {FRAME_MS} ms)"
    )


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_keyboard_alone_drives_the_player(context, harness, page_md, name):
    page, errors = open_player(context, harness, page_md, name)
    found, usable = keyboard_alone(page)
    assert found.pop("focus"), f"{name}: Tab does not reach the player"
    assert all(found.values()), f"{name}: keys that changed nothing: {[k for k, ok in found.items() if not ok]}"
    assert usable <= set(found), f"{name}: controls Tab never reached: {sorted(usable - set(found))}"
    assert errors == [], f"{name}: console errors: {errors}"


COLUMN_PX = 725  # the book theme's text column
JS_LAYOUT = """(column) => {
  const host = document.getElementById('host');
  host.style.width = column + 'px';
  const root = window.playerEl.querySelector('.lk-player');
  const box = root.getBoundingClientRect();
  const small = [], cut = [];
  for (const node of root.querySelectorAll('*')) {
    if (!Array.from(node.childNodes).some(c => c.nodeType === 3 && c.textContent.trim())) continue;
    if (node.closest('select, style, title') || !(node.getBoundingClientRect().width)) continue;
    const svg = node.closest('svg');
    const scale = svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width
      ? svg.getBoundingClientRect().width / svg.viewBox.baseVal.width : 1;
    const px = parseFloat(getComputedStyle(node).fontSize) * scale;
    if (px < 11 - 0.01) small.push(`${node.tagName} ${px.toFixed(1)}px: ${node.textContent.trim().slice(0, 30)}`);
    const r = node.getBoundingClientRect(), b = svg && svg.getBoundingClientRect();
    if (b && (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)) {
      const span = (lo, hi, size) => `${Math.round(lo)}…${Math.round(hi)} of ${Math.round(size)} px`;
      const across = span(r.left - b.left, r.right - b.left, b.width);
      const down = span(r.top - b.top, r.bottom - b.top, b.height);
      cut.push(`${node.textContent.trim().slice(0, 30)} (${across}, ${down})`);
    }
  }
  for (const canvas of root.querySelectorAll('canvas')) {
    const own = (window.canvasTextPx || new WeakMap()).get(canvas);
    if (own === undefined) continue;
    const px = own * canvas.getBoundingClientRect().width / canvas.width;
    if (px < 11 - 0.01) small.push(`CANVAS ${canvas.dataset.role || ''} text ${px.toFixed(1)}px`);
  }
  const wrapped = [];
  for (const parent of root.querySelectorAll('div')) {
    const drawings = Array.from(parent.children)
      .filter(c => c.tagName.toLowerCase() === 'svg' || c.tagName === 'CANVAS');
    const tops = new Set(drawings.map(d => Math.round(d.getBoundingClientRect().top)));
    if (tops.size > 1) wrapped.push(parent.className || 'div');
  }
  const scrolls = Array.from(root.querySelectorAll('*')).filter(n => n !== root && n.scrollWidth > n.clientWidth + 1
    && getComputedStyle(n).overflowX !== 'visible' && !n.closest('.lk-scroll, .lk-sr'))
    .map(n => n.tagName + '.' + n.className);
  // a marked scroll region that scrolls says so: its cue (the next element) is shown
  const uncued = Array.from(root.querySelectorAll('.lk-scroll')).filter(n => n.scrollWidth > n.clientWidth + 1)
    .filter(n => { const cue = n.nextElementSibling;
      return !(cue && cue.classList.contains('lk-scroll-cue') && cue.offsetHeight && cue.textContent.trim()); })
    .map(n => n.dataset.role || n.className);
  const page = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  return {width: box.width, sideways: Math.max(root.scrollWidth - root.clientWidth, page), small, cut, wrapped, scrolls,
          uncued};
}"""


def layout_problems(page, column: int, wide: bool = True) -> list[str]:
    """What is wrong with the player's layout in a ``column``-px column: wider than the column,
    sideways scrolling outside a marked scroll region with its cue shown, text under 11 px, labels
    cut at their drawing's edge; at the full column also drawings wrapped onto a second line."""
    layout = page.evaluate(JS_LAYOUT, column)
    found = [f"{layout['width']:.0f} px wide"] if layout["width"] > column + 0.5 else []
    found += [f"scrolls sideways by {layout['sideways']} px"] if layout["sideways"] > 1 else []
    found += [f"a box scrolls sideways that is no marked timeline: {n}" for n in layout["scrolls"]]
    found += [f"a timeline scrolls sideways with no cue shown: {n}" for n in layout["uncued"]]
    found += [f"drawings wrapped onto a second line in {n}" for n in layout["wrapped"] if wide]
    found += [f"text under 11 px: {n}" for n in layout["small"][:6]]
    found += [f"label cut at its drawing's edge: {n}" for n in layout["cut"][:6]]
    return [f"{column} px: {p}" for p in found]


PHONE = {"width": 390, "height": 844}  # a phone; the book's text column is then ≈ 364 px
PHONE_COLUMN_PX = 364
JS_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"


@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=IDS)
def test_player_fits_the_text_column_with_no_text_under_11px(context, harness, page_md, name):
    """In the 725-px column and, on a 390-px phone, in its 364-px column: the player lays out for
    the width it has (it reflows, never shrinks its drawing, and scrolls only a marked timeline)."""
    page, _ = open_player(context, harness, page_md, name)
    page.evaluate("(w) => { document.getElementById('host').style.width = w + 'px'; }", COLUMN_PX)
    page.evaluate(JS_TWO_FRAMES)  # the harness is wider than the column when the player first draws
    problems = layout_problems(page, COLUMN_PX)
    page.evaluate("() => window.playerEl.querySelector('.lk-player').focus()")
    page.keyboard.press("End")  # the last step: a long timeline must have followed it
    hidden = page.evaluate("""() => Array.from(window.playerEl.querySelectorAll('.lk-scroll')).map(box => {
      const at = box.querySelector('.lk-current, .lk-first');
      if (!at) return null;
      const b = box.getBoundingClientRect(), r = at.getBoundingClientRect();
      const inside = r.left >= b.left - 1 && r.right <= b.right + 1;
      return inside ? null : `${Math.round(r.left)}–${Math.round(r.right)} outside the box ${Math.round(b.right)}`;
    }).filter(Boolean)""")
    problems += [f"the current step is out of view in its timeline: {h}" for h in hidden]
    page.set_viewport_size(PHONE)
    page.evaluate("(w) => { document.getElementById('host').style.width = w + 'px'; }", PHONE_COLUMN_PX)
    page.evaluate(JS_TWO_FRAMES)  # a player that lays out again on a resize does it by the next frame
    problems += layout_problems(page, PHONE_COLUMN_PX, wide=False)
    assert problems == [], f"{name}:\n" + "\n".join(problems)


def test_the_layout_check_sees_small_canvas_text_and_cut_labels(context, harness):
    """The check itself: a canvas written at 7 px, one drawn at 11 px but shown at half its size,
    and an SVG label running off its drawing are all reported; a 12-px canvas text is not."""
    page, _ = open_player(context, harness, *EMBEDS[0])
    page.evaluate("""() => {
      const root = window.playerEl.querySelector('.lk-player');
      const canvas = (w, px, shown) => {
        const c = document.createElement('canvas');
        c.width = w; c.height = 20; c.style.width = shown + 'px'; c.dataset.role = `probe-${px}-${shown}`;
        const ctx = c.getContext('2d'); ctx.font = px + 'px sans-serif'; ctx.fillText('0.25', 2, 15);
        root.append(c);
      };
      canvas(40, 7, 40); canvas(80, 11, 40); canvas(40, 12, 40);
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('width', 60); svg.setAttribute('height', 20);
      svg.innerHTML = '<text x="-30" y="14" font-size="12">rbed_weight</text>';
      root.append(svg);
    }""")
    layout = page.evaluate(JS_LAYOUT, COLUMN_PX)
    canvases = [s for s in layout["small"] if s.startswith("CANVAS")]
    assert canvases == ["CANVAS probe-7-40 text 7.0px", "CANVAS probe-11-40 text 5.5px"], layout["small"]
    assert [c.split(" (")[0] for c in layout["cut"]] == ["rbed_weight"], layout["cut"]


def test_no_player_fetches_anything(browser, harness):
    """Network closed except 127.0.0.1; each player loaded and every control moved: the only
    requests are the harness page, the module and its model."""
    ctx = browser.new_context()
    asked: list[str] = []

    def route(r):
        asked.append(r.request.url)
        if r.request.url.startswith(harness.base + "/"):
            r.continue_()
        else:
            r.abort()

    ctx.route("**/*", route)
    try:
        for page_md, name in EMBEDS:
            asked.clear()
            page, _ = open_player(ctx, harness, page_md, name)
            every_control_changes_the_drawing(page)
            page.wait_for_timeout(200)
            extra = [u for u in asked if "/index.html" not in u and "/module/" not in u and "/model/" not in u]
            assert extra == [], f"{name}: the player asked for {extra}"
            page.close()
    finally:
        ctx.close()


# -- what each player must show (numbers from the source chapter) ------------------------
def check_decode(page):
    """Step 1: cache 12, selects 14; next → step 2: cache 13, selects 15; at step 5 EOS 18."""
    operate(page, "step", 1)
    shown = text(page)
    assert "selection step 1 of 5" in shown and "cache length at step start: 12" in shown, shown[:300]
    assert "selected: 14 " in shown, shown[:300]
    operate(page, "next")
    shown = text(page)
    assert "selection step 2 of 5" in shown and "cache length at step start: 13" in shown, shown[:300]
    assert "selected: 15 " in shown, shown[:300]
    operate(page, "step", 5)
    shown = text(page)
    assert "selected: 18 " in shown and "cache length at step start: 16" in shown, shown[:300]
    assert page.evaluate("() => window.playerEl.querySelector('[data-control=next]').disabled")


def check_divergence(page):
    """A perturbed weight first shows in e04's raw-logit tensors; the wrong processor order at
    e05 in processor_order[0]; the tool trace's first fault (extra_field) at t02; the rows are labelled."""
    operate(page, "kind", 0)
    shown = text(page)
    assert "golden" in shown and "faulty: perturbed_weight" in page.evaluate(
        "() => window.playerEl.querySelector('svg').textContent"
    ), shown[:300]
    assert "(e04 vs e04, prefill.completed)" in shown and "tensors" in shown, shown[:400]
    page.evaluate("""() => { const c = window.playerEl.querySelector('[data-control=fault]');
      c.value = 'wrong_processor_order'; c.dispatchEvent(new Event('change')); }""")
    shown = text(page)
    assert "(e05 vs e05, token.selected)" in shown and "processor_order[0]" in shown, shown[:400]
    operate(page, "kind", 2)
    assert "(t02 vs t02, proposal.parsed)" in text(page), text(page)[:400]


def pick(page, control, value):
    page.evaluate(
        """([c, v]) => { const s = window.playerEl.querySelector(`[data-control=${c}]`);
      s.value = v; s.dispatchEvent(new Event('change')); }""",
        [control, value],
    )


def check_scenarios(page):
    """The timeout scenario crosses the commit boundary at t11 after a retry (attempt 2) and
    diverges from the happy path at t09; the crash after the journal write leaves the first
    attempt's journal rows and recovers; the happy path commits at t09."""
    pick(page, "scenario", "timeout_before_commit")
    shown = text(page)
    assert "commit boundary at t11" in shown and "first divergence from the happy path at t09" in shown, shown[:500]
    assert "retry: attempt 2" in page.evaluate("() => window.playerEl.querySelector('svg').textContent")
    pick(page, "scenario", "happy")
    assert "commit boundary at t09" in text(page) and "the happy path itself" in text(page)
    pick(page, "scenario", "crash_after_journal_write")
    for _ in range(9):
        operate(page, "next")
    shown = text(page)
    assert "t09 runtime.crashed" in shown and "no side effect yet" in shown, shown[:600]
    rows = page.evaluate("() => Array.from(window.playerEl.querySelectorAll('.lk-journal tr:not(.lk-future)')).length")
    assert rows == 3, f"{rows} journal rows written by t09 (expected 3: t05, t06, t08)"


def check_latents(page):
    """Opens at the end (z_0, guidance 5); step 0 is z_999 with the noise decoded; the four
    channels are named; guidance 0 changes the channels at the same step."""
    pick(page, "guidance", "5")
    operate(page, "step", 4)
    shown = text(page)
    assert "step 4/4 · z_0 · guidance 5" in shown, shown[:300]
    for name in ("0 luminance", "1 red-cyan", "2 blue-yellow", "3 light"):
        assert name in shown, f"channel {name!r} not labelled"
    operate(page, "step", 0)
    assert "step 0/4 · z_999" in text(page) and "initial noise" in text(page)
    operate(page, "step", 2)
    assert "z_499" in text(page) and "x̂₀ of step 2" in text(page)
    pixels = "() => window.playerEl.querySelector('canvas').toDataURL()"
    before = page.evaluate(pixels)
    pick(page, "guidance", "0")
    assert "guidance 0" in text(page) and page.evaluate(pixels) != before, "guidance 0 drew the same channel"


def check_attention(page):
    """Prefill rows sum to 1 over the allowed keys (upper triangle blocked); with 0 cached the
    two decode masks draw the same; with 3 cached the top-left mask blocks keys the causal one
    allows; the packed-document mask is block-diagonal (row 4 sees only itself)."""
    canvases = "() => Array.from(window.playerEl.querySelectorAll('canvas[data-role=heatmap]'))"
    pick(page, "group", "prefill")
    blocked = page.evaluate(canvases + ".map(c => Number(c.dataset.blocked))")
    assert blocked == [66, 66], f"blocked cells per prefill head: {blocked} (expected 66 = 12·11/2)"
    pick(page, "group", "decode")
    heat = canvases + ".map(c => c.toDataURL()).join('')"
    pick(page, "cached", "0")
    pick(page, "alignment", "causal (bottom-right)")
    causal0 = page.evaluate(heat)
    pick(page, "alignment", "top-left rectangular")
    assert page.evaluate(heat) == causal0, "with nothing cached the two masks must agree"
    pick(page, "cached", "3")
    topleft3 = page.evaluate(heat)
    pick(page, "alignment", "causal (bottom-right)")
    assert page.evaluate(heat) != topleft3 and "3 cached + 4 new tokens" in text(page)
    pick(page, "group", "masks")
    pick(page, "mask", "packed documents")
    cells = page.evaluate(canvases + ".map(c => JSON.parse(c.dataset.cells))")
    assert cells[0][4] == [0, 0, 0, 0, 1, 0, 0, 0], f"packed-document row 4: {cells[0][4]}"


def check_fault_modes(page):
    """The RoPE reset fails the logit check only; correct passes all three; the copied cache
    fails the distinct-layer check too."""
    verdicts = "() => Array.from(window.playerEl.querySelectorAll('[data-role=checks] tr')).map(r => r.innerText)"
    pick(page, "mode", "reset_rope_position")
    rows = page.evaluate(verdicts)
    assert [("FAIL" in r) for r in rows] == [False, True, False], rows
    pick(page, "mode", "correct")
    assert "FAIL" not in text(page) and "nothing (correct)" in text(page)
    pick(page, "mode", "copy_layer1_cache_to_layer2")
    assert [("FAIL" in r) for r in page.evaluate(verdicts)] == [False, True, True]
    assert "layer 1 = layer 0" in text(page)


def check_dpo_margin(page):
    """The lab's pair (β 0.2, −2 / −3 against −2.5 each): margin 0.2, loss 0.5981; the rejected
    answer 2 nats less probable: margin 0.6 and a smaller loss; the loss curve moves with β."""
    for control, index in (("chosen", 8), ("rejected", 6), ("beta", 2)):  # −2, −3 on −6 … −0.5; 0.2
        operate(page, control, index)
    shown = text(page)
    assert "margin m 0.2000" in shown and "loss 0.5981" in shown and "gradient [−0.0900, 0.0900]" in shown, shown[:300]
    page.evaluate("""() => { const c = window.playerEl.querySelector('[data-control=rejected]');
      c.value = String(Number(c.value) - 4); c.dispatchEvent(new Event('input')); }""")
    assert "margin m 0.6000" in text(page), text(page)[:300]
    curve = "() => window.playerEl.querySelector('[data-role=loss] polyline').getAttribute('points')"
    before = page.evaluate(curve)
    operate(page, "beta", 4)
    assert page.evaluate(curve) != before and "β" in text(page)


def check_grpo_group(page):
    """0 0 1 1 at ε 1e-8: ±1.0000 (ddof 0), ±0.8660 (ddof 1); one success in four: √3 and 1.5."""
    pick(page, "group", "0 0 1 1")
    pick(page, "eps", "1e-08")
    shown = text(page)
    assert "ddof 0: [−1.00000, −1.00000, 1.00000, 1.00000]" in shown and "0.866025" in shown, shown[:300]
    pick(page, "eps", "0.1")
    assert "ddof 0: [−0.833333, " in text(page), text(page)[:300]
    pick(page, "eps", "1e-08")
    pick(page, "group", "1 0 0 0")
    assert "ddof 0: [1.73205, " in text(page) and "ddof 1: [1.50000, " in text(page), text(page)[:300]
    pick(page, "group", "0.7 0.7 0.7")
    assert "1.11022e−8" in text(page), "the rounding surprise of 0.7 0.7 0.7 is shown"


def check_speculative_sampler(page):
    """Seed 73, 200 000 draws: observed 0.599475 0.300205 0.10032 within the six-sigma check;
    the wrong fallback (refill from p) gives the biased law 0.52 0.36 0.12 and fails it."""
    for control, value in (("fallback", "residual"), ("draws", "200000"), ("seed", "73")):
        pick(page, control, value)
    shown = text(page)
    assert "observed [0.599475, 0.300205, 0.100320]" in shown and "acceptance 0.8012" in shown, shown[:400]
    pick(page, "fallback", "target")
    shown = text(page)
    assert "exact output [0.5200, 0.3600, 0.1200]" in shown and "TV to p 0.0800" in shown, shown[:400]
    sigmas = float(shown.split("max ")[1].split(" σ")[0])
    assert sigmas > 6.0, f"the wrong fallback at {sigmas} σ passes the six-sigma check"


def check_bandwidth_calculator(page):
    """Batch 1 reads 15,073,741,824 B (≥ 15.074 ms); batch 8 at most 354.14 tok/s in total; 2 TB/s halves it."""
    for control, value in (
        ("bytes_per_param", "2"),
        ("kv_bytes", "2"),
        ("context", "8192"),
        ("kv_heads", "8"),
        ("tb", "1"),
    ):
        pick(page, control, value)
    pick(page, "batch", "1")
    assert "read 15,073,741,824 B per step → ≥ 15.074 ms" in text(page), text(page)[:400]
    pick(page, "batch", "8")
    assert "≤ 354.14 tok/s in total" in text(page)
    pick(page, "tb", "2")
    assert "≥ 11.295 ms" in text(page), text(page)[:400]


def check_grammar(page):
    """mc_01's proposal: step 1 of 27 chooses '{"' from 2 allowed tokens; next appends
    calendar_id to the JSON so far; step 27 is forced to <|call_end|>."""
    operate(page, "step", 1)
    shown = text(page)
    assert "step 1 of 27" in shown and "allowed: 2 of 256 tokens" in shown and 'JSON so far: {"' in shown, shown[:300]
    operate(page, "next")
    assert 'JSON so far: {"calendar_id' in text(page)
    operate(page, "step", 27)
    assert "(forced)" in text(page) and "chosen: 10 <|call_end|>" in text(page), text(page)[:300]


def check_mask_editor(page):
    """The packing row: row 4 (document 1's first token) sees only itself, supervised 0 1 2 4 5 6;
    joining the documents supervises position 3 too; the SFT example supervises 4, 5, 6."""
    pick(page, "preset", "two packed documents, every token a target")
    assert "supervised positions [0, 1, 2, 4, 5, 6]" in text(page), text(page)[:400]
    row4 = """() => Array.from(window.playerEl.querySelectorAll('[data-role=allowed] rect'))
      .slice(32, 40).map(r => r.getAttribute('class'))"""
    assert page.evaluate(row4) == ["lk-off"] * 4 + ["lk-on"] + ["lk-off"] * 3
    operate(page, "split3")  # no new document after token 3: one document
    assert "supervised positions [0, 1, 2, 3, 4, 5, 6]" in text(page), text(page)[:400]
    pick(page, "preset", "one document, assistant tokens 5–7 the targets")
    assert "supervised positions [4, 5, 6]" in text(page), text(page)[:400]


def check(name: str):
    """What player ``name`` must show: this module's ``check_<name>`` (none: nothing more)."""
    return globals().get(f"check_{name}", lambda page: None)
