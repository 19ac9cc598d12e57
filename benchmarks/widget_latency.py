"""Widget latency: from a control's new value to the widget's updated output, without a browser.

Setting an ipywidgets trait runs its observers synchronously in this process, so the time
of ``control.value = v`` (or of the stepper's ``step = k``) *is* the time until the new
picture sits in the widget's ``image.value`` — everything but the browser's paint.

For each case a fresh widget is built (untimed), then every value of the case is visited
once (*cold*: nothing cached for it yet) and once more (*warm*: whatever the widget caches
is reused). labkit keeps the PNG of every state it has drawn in a process-wide cache
(``labkit.reader.png``); it is emptied before each repetition, so *cold* is a real
first visit every time and never a picture left over from the previous repetition. Where a
widget can skip its drawing (``images=False`` / ``render=False``), the
same changes are timed without it (*state only*), which splits a change into computing the
state and drawing the picture. Widgets that draw ahead while the kernel idles (the two
steppers) are also timed *after idle*: button presses inside a running event loop, as in a
kernel, with the loop left idle half a second between presses. The target is judged on
*cold*. Each change must alter the output the reader sees; a change
that does not is reported (``output_changed: false``), not timed as a success.

Target: ≤ 50 ms per step change.

The decode stepper, latent viewer, attention heatmap, fault toggle and divergence explorer
are players now, drawn in the browser: ``benchmarks/players.py`` times them in Chromium.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.stats import scaled, summarize

TARGET_MS = 50.0


@dataclass(frozen=True)
class WidgetCase:
    """One kind of change of one widget.

    build(render) → widget (render=False: no picture, or None when the widget cannot skip it);
    values(widget) → the new values to visit, in order; change(widget, value) applies one;
    output(widget) → what the reader sees (compared before/after each change).
    """

    name: str
    module: str
    build: Callable[[bool], object]
    values: Callable[[object], list]
    change: Callable[[object, object], None]
    output: Callable[[object], object]
    target_ms: float | None = TARGET_MS
    note: str = ""
    can_skip_render: bool = False
    #: press(widget) → one button press, for widgets that draw ahead while the kernel idles
    press: Callable[[object], None] | None = None


# ------------------------------------------------------------------------------ cases
_shared: dict[str, object] = {}


def _set_step(w, value):
    w.step = value


def _set_slider(attr: str):
    def change(w, value):
        getattr(w, attr).value = value

    return change


def _toggles(render: bool):
    from labkit.reader.widgets.cache_faults import cache_fault_toggles

    return cache_fault_toggles("correct", render=render)


def _toggles_output(w):
    return (w.checks.value, w.image.value, w.case.mode)


def _grammar_stepper(render: bool):
    from labkit.reader.widgets.tools import GrammarStepper

    if "tool_first_call" not in _shared:
        from labkit.tools.runtime import run_tool_trace

        _shared["tool_first_call"] = run_tool_trace().first_call
    return GrammarStepper(_shared["tool_first_call"], step=1, images=render)


#: At most this many values per case (a change of a big dropdown needs no 20 samples per run).
MAX_VALUES = 6

CASES: tuple[WidgetCase, ...] = (
    WidgetCase(
        "cache fault toggles: mode change",
        "labkit.reader.widgets.cache_faults",
        _toggles,
        lambda w: [m for m in w.mode_buttons.options if m != w.mode_buttons.value],
        _set_slider("mode_buttons"),
        _toggles_output,
        note="cold = the fault case is decoded; warm = cached case, redrawn",
        can_skip_render=True,
    ),
    WidgetCase(
        "grammar stepper: step change",
        "labkit.reader.widgets.tools",
        _grammar_stepper,
        lambda w: list(range(2, min(w.n_steps, MAX_VALUES) + 1)),
        _set_step,
        lambda w: (w.step, w.image.value),
        note="trace three's constrained decoding, steps 2…6",
        can_skip_render=True,
        press=lambda w: w.forward_button.click(),
    ),
)


# -------------------------------------------------------------------------- measuring
def _visit(case: WidgetCase, widget, values) -> tuple[list[float], bool]:
    samples, all_changed = [], True
    for value in values:
        before = case.output(widget)
        start = time.perf_counter()
        case.change(widget, value)
        samples.append(time.perf_counter() - start)
        if case.output(widget) == before:
            all_changed = False
    return samples, all_changed


def forget_pictures() -> None:
    """Nothing to empty: labkit's PNG cache went with its PNG widgets (the players draw in the browser)."""


#: how long the kernel is left idle between two presses (a reader needs longer to read a step)
IDLE_SECONDS = 0.5


def after_idle(case: WidgetCase, presses: int = MAX_VALUES - 1) -> list[float]:
    """Seconds per press (``case.press``) inside a running event loop, as in a Jupyter kernel,
    with the loop left idle ``IDLE_SECONDS`` between presses: what a widget that draws ahead
    while the reader looks at a step shows on the next press. The first press of a fresh
    widget is not timed (nothing can have been drawn ahead of it); at most as many presses
    as ``case.values`` offers changes."""
    import asyncio

    async def run() -> list[float]:
        widget = case.build(True)
        case.press(widget)
        samples = []
        for _ in range(min(presses, len(case.values(widget)) - 1)):  # never press past the end
            await asyncio.sleep(IDLE_SECONDS)
            before = case.output(widget)
            start = time.perf_counter()
            case.press(widget)
            samples.append(time.perf_counter() - start)
            if case.output(widget) == before:
                raise ValueError(f"{case.name}: a press did not change the picture")
        return samples

    forget_pictures()
    return asyncio.run(run())


def measure_case(case: WidgetCase, repeats: int = 3) -> dict:
    """Cold, warm and (when possible) state-only latencies of one case, in milliseconds."""
    cold, warm, state_only, changed = [], [], [], True
    for _ in range(repeats):
        forget_pictures()
        widget = case.build(True)
        values = list(case.values(widget))[:MAX_VALUES]
        if not values:
            raise ValueError(f"{case.name}: the widget offers no value to change to")
        c, ok1 = _visit(case, widget, values)
        w, _ = _visit(case, widget, list(reversed(values))[1:] + [values[-1]]) if len(values) > 1 else ([], True)
        cold += c
        warm += w
        changed = changed and ok1
        if case.can_skip_render:
            bare = case.build(False)
            s, _ = _visit(case, bare, list(case.values(bare))[:MAX_VALUES])
            state_only += s
    ahead = []
    if case.press is not None:
        for _ in range(repeats):
            ahead += after_idle(case)
    cold_ms = scaled(summarize(cold), 1000.0)
    return {
        "name": case.name,
        "module": case.module,
        "available": True,
        "reason": None,
        "changes_per_run": len(cold) // repeats,
        "cold_ms": cold_ms,
        "warm_ms": scaled(summarize(warm), 1000.0) if warm else None,
        "state_only_ms": scaled(summarize(state_only), 1000.0) if state_only else None,
        "after_idle_ms": scaled(summarize(ahead), 1000.0) if ahead else None,
        "output_changed": changed,
        "target_ms": case.target_ms,
        "meets_target": None if case.target_ms is None else bool(cold_ms["median"] <= case.target_ms),
        "note": case.note,
    }


def unavailable_case(case: WidgetCase, reason: str) -> dict:
    return {
        "name": case.name,
        "module": case.module,
        "available": False,
        "reason": reason,
        "changes_per_run": 0,
        "cold_ms": None,
        "warm_ms": None,
        "state_only_ms": None,
        "after_idle_ms": None,
        "output_changed": None,
        "target_ms": case.target_ms,
        "meets_target": None,
        "note": case.note,
    }


def widget_latency(repeats: int = 3, cases=CASES) -> dict:
    """Every case measured; a widget that fails is reported as not available, with its error."""
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    results = []
    for case in cases:
        try:
            results.append(measure_case(case, repeats))
        except Exception as exc:  # a widget still being written: report, do not crash
            results.append(unavailable_case(case, f"{type(exc).__name__}: {exc}"))
    return {"available": any(r["available"] for r in results), "target_ms": TARGET_MS, "cases": results}


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(widget_latency(repeats=2), indent=2))
