"""Widget of the cache-faults lab (lab 05): toggle a cache fault and see which check catches it.

Like every lab widget: a state (``FaultCase``, computed by ``labkit.labs.cache_faults``), a
drawing function, and a ``WidgetView`` front end whose picture is that drawing; the static
book calls ``cache_fault_figure()``.

    toggles = cache_fault_toggles(); toggles.case.caught_by
"""

from __future__ import annotations

import numpy as np

from labkit.labs.cache_faults import MODES, FaultCase, run_case
from labkit.reader.widgets.lab_base import WidgetView, static_figure


# ---------------------------------------------------------------------------------------
# cache fault toggles
# ---------------------------------------------------------------------------------------
def check_rows(case: FaultCase) -> list[tuple[str, bool, str]]:
    """(check, passed, what it saw) for the three checks of one fault case."""
    return [
        ("shape", case.shape_check_passed, f"shapes {case.cache_shapes}"),
        ("logit", case.logit_allclose_passed, f"max error {float(case.per_position_error.max()):.3g}"),
        (
            "distinct_layer",
            case.distinct_layer_keys_passed,
            "keys differ" if case.distinct_layer_keys_passed else "layer 1 = layer 0",
        ),
    ]


ERROR_AXIS = (1e-17, 1e2)  # every mode's errors (1e-16 … 1.6) on one scale


def draw_fault_view(case: FaultCase, figure) -> None:
    """Per-position max |logit error| bars on the left, the three checks on the right."""
    bars, notes = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    error = case.per_position_error
    # one fixed log axis for every mode, so modes compare at a glance; a zero error sits on the floor
    bars.bar(
        np.arange(error.size), np.maximum(error, ERROR_AXIS[0]), color="tab:red" if case.caught_by else "tab:green"
    )
    bars.axhline(1e-12, color="0.4", linewidth=0.8, linestyle="--")
    bars.text(error.size - 0.5, 1e-12, "tolerance 1e-12", ha="right", va="bottom", fontsize=8, color="0.3")
    bars.set_xticks(range(error.size))
    bars.set_xlabel("decode position")
    bars.set_ylabel("max |cached − full| logit")
    bars.set_yscale("log")
    bars.set_ylim(*ERROR_AXIS)
    bars.set_title(case.mode, fontsize=10)
    notes.axis("off")
    lines = [f"{'PASS' if passed else 'FAIL'}  {name}: {seen}" for name, passed, seen in check_rows(case)]
    caught = ", ".join(case.caught_by) if case.caught_by else "nothing (correct)"
    lines += ["", f"caught by: {caught}"]
    notes.text(
        0.0, 0.95, "\n".join(lines), va="top", fontsize=8.5, family="monospace", transform=notes.transAxes, wrap=True
    )


def cache_fault_figure(case: FaultCase | None = None):
    """The cache fault toggles' view (default: reset_rope_position) as a pyplot figure."""
    return static_figure(draw_fault_view, case or run_case("reset_rope_position"))


class CacheFaultToggles(WidgetView):
    """Pick a mode of ``labkit.labs.cache_faults.MODES``; ``case`` is that run, ``checks`` its checks."""

    def __init__(self, mode: str = "reset_rope_position", render: bool = True):
        import ipywidgets as widgets

        self.render = render

        self._cases: dict[str, FaultCase] = {}
        self.case: FaultCase = self._case(mode)
        # radio buttons: every mode's full name shows and the chosen one is unmistakable
        self.mode_buttons = widgets.RadioButtons(
            options=list(MODES), value=mode, description="mode", layout=widgets.Layout(width="auto")
        )
        self.checks = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.mode_buttons.observe(self.update, names="value")
        self.box = widgets.VBox([self.mode_buttons, self.checks, self.image])
        self.update()

    def _case(self, mode: str) -> FaultCase:
        if mode not in self._cases:
            self._cases[mode] = run_case(mode)
        return self._cases[mode]

    def update(self, change=None) -> None:
        self.case = self._case(self.mode_buttons.value)
        rows = "".join(
            f"<tr><td>{name}</td><td>{'pass' if ok else '<b>FAIL</b>'}</td><td>{seen}</td></tr>"
            for name, ok, seen in check_rows(self.case)
        )
        self.checks.value = f"<table>{rows}</table>"
        self._draw(draw_fault_view, self.case, (9.0, 3.4))


def cache_fault_toggles(mode: str = "reset_rope_position", render: bool = True) -> CacheFaultToggles:
    return CacheFaultToggles(mode, render)
