"""Widgets of the serving labs: the speculative sampler (lab 09) and the bandwidth calculator (lab 10).

Each widget has a *state* (a frozen dataclass computed by the labs' own functions), a
*drawing function* ``draw_*_view(state, figure)``, and a small ipywidgets front end whose
picture is that drawing rendered to PNG (the shared front end is
``labkit.reader.widgets.lab_base.WidgetView``).  The static book calls ``*_figure()`` on the
default state, so the widget and its static figure can never disagree.  ipywidgets and
matplotlib are imported inside functions only.

    sampler = speculative_sampler();   sampler.state.observed        # Monte Carlo frequencies [V]
    calc = bandwidth_calculator();     calc.state.step["lower_bound_ms"]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labkit.labs import speculative
from labkit.labs.bandwidth import DecodeBudget
from labkit.reader.widgets.lab_base import WidgetView, fmt_numbers, parse_numbers, static_figure


# ---------------------------------------------------------------------------------------
# speculative sampler
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpeculativeState:
    """One prefix of draft-then-verify sampling, exact and simulated.

    p, q [V]: target and draft; mass: the exact decomposition (``speculative_mass``);
    refill [V]: what a rejection draws from (the residual r, or p for the wrong fallback);
    output [V] = q·α + β·refill, the exact law of the output token; observed [V]: Monte Carlo
    frequencies of ``samples`` draws with ``seed``; acceptance_rate: share of drafts kept;
    standard_errors: max |observed − p| in standard errors.
    """

    p: np.ndarray
    q: np.ndarray
    fallback: str
    samples: int
    seed: int
    mass: speculative.SpeculativeMass
    refill: np.ndarray
    output: np.ndarray
    observed: np.ndarray
    acceptance_rate: float
    standard_errors: float


def speculative_state(
    p=speculative.TARGET,
    q=speculative.DRAFT,
    samples: int = 200_000,
    seed: int = speculative.SEED,
    fallback: str = "residual",
) -> SpeculativeState:
    """Exact law and a seeded Monte Carlo run for target ``p`` and draft ``q`` ([V] each)."""
    mass = speculative.speculative_mass(p, q)
    target = np.asarray(p, dtype=np.float64)
    if fallback == "residual":
        refill, output = mass.residual, mass.output
    elif fallback == "target":
        refill, output = target, speculative.wrong_fallback_output(p, q)
    else:
        raise ValueError(f"fallback must be one of {speculative.FALLBACKS}, got {fallback!r}")
    drawn = speculative.simulate(p, q, samples, seed, fallback)
    return SpeculativeState(
        p=target,
        q=np.asarray(q, dtype=np.float64),
        fallback=fallback,
        samples=int(samples),
        seed=int(seed),
        mass=mass,
        refill=refill,
        output=output,
        observed=drawn.observed,
        acceptance_rate=float(drawn.accepted.mean()),
        standard_errors=speculative.standard_error_units(drawn.observed, target, int(samples)),
    )


def draw_speculative_view(state: SpeculativeState, figure) -> None:
    """Left: exact output mass per token, stacked (accepted draft + rejection refill) against p.
    Right: Monte Carlo frequencies beside p."""
    exact, simulated = figure.subplots(1, 2)
    tokens = np.arange(state.p.size)
    refill_mass = state.mass.reject_probability * state.refill
    label = "β·r (refill from residual)" if state.fallback == "residual" else "β·p (WRONG: refill from p)"
    exact.bar(tokens, state.mass.accepted_mass, color="tab:blue", label="q·α (draft accepted)")
    exact.bar(
        tokens,
        refill_mass,
        bottom=state.mass.accepted_mass,
        color="tab:orange" if state.fallback == "residual" else "tab:red",
        label=label,
    )
    exact.scatter(tokens, state.p, marker="_", s=900, color="black", zorder=3, label="target p")
    exact.set_xticks(tokens)
    exact.set_xlabel("token")
    exact.set_ylabel("probability")
    gap = float(np.abs(state.output - state.p).sum()) / 2
    exact.set_title(f"exact law, β = {state.mass.reject_probability:.4f}, TV to p = {gap:.4f}", fontsize=10)
    exact.legend(fontsize=8, loc="upper right", markerscale=0.35)  # p's wide tick, not through the label
    top = float(max(state.p.max(), state.output.max(), state.observed.max()))
    exact.set_ylim(0, top * 1.35)

    width = 0.38
    simulated.bar(tokens - width / 2, state.p, width, color="0.75", label="target p")
    simulated.bar(
        tokens + width / 2,
        state.observed,
        width,
        color="tab:green" if state.standard_errors < speculative.SIGMA_BOUND else "tab:red",
        label=f"observed ({state.samples} draws)",
    )
    simulated.set_xticks(tokens)
    simulated.set_xlabel("token")
    simulated.set_ylim(0, top * 1.35)
    simulated.set_title(
        f"seed {state.seed}: acceptance {state.acceptance_rate:.4f}, max {state.standard_errors:.1f} σ", fontsize=10
    )
    simulated.legend(fontsize=8, loc="upper right")


def speculative_figure(state: SpeculativeState | None = None):
    """The speculative sampler's view (default: the lab's p, q, seed 73, 200 000 draws) as a pyplot figure."""
    return static_figure(draw_speculative_view, state or speculative_state())


class SpeculativeSampler(WidgetView):
    """Edit p and q, the number of draws and the fallback; ``state`` follows the edits."""

    def __init__(self, state: SpeculativeState, render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.state = state
        layout = widgets.Layout(width="420px")
        self.p_text = widgets.Text(
            value=fmt_numbers(state.p), description="target p", layout=layout, continuous_update=False
        )
        self.q_text = widgets.Text(
            value=fmt_numbers(state.q), description="draft q", layout=layout, continuous_update=False
        )
        self.samples_slider = widgets.IntSlider(
            value=state.samples, min=1_000, max=400_000, step=1_000, description="draws", continuous_update=False
        )
        self.seed_box = widgets.IntText(value=state.seed, description="seed")
        self.wrong_fallback = widgets.Checkbox(
            value=state.fallback == "target", description="wrong fallback: refill from p"
        )
        self._assemble([self.p_text, self.q_text, self.samples_slider, self.seed_box, self.wrong_fallback])

    def update(self, change=None) -> None:
        """Recompute from the controls and redraw; bad input shows its error and keeps the old state."""
        fallback = "target" if self.wrong_fallback.value else "residual"
        self._show(
            lambda: speculative_state(
                parse_numbers("target p", self.p_text.value),
                parse_numbers("draft q", self.q_text.value),
                self.samples_slider.value,
                self.seed_box.value,
                fallback,
            ),
            draw_speculative_view,
            lambda s: (
                f"α = {fmt_numbers(np.round(s.mass.accept_probability, 4))} · "
                f"β = {s.mass.reject_probability:.4f} · "
                f"exact output = {fmt_numbers(np.round(s.output, 4))}"
            ),
        )


def speculative_sampler(render: bool = True, **settings) -> SpeculativeSampler:
    """The sampler, starting from ``speculative_state(**settings)`` (default: the lab's p, q, seed 73)."""
    return SpeculativeSampler(speculative_state(**settings), render)


# ---------------------------------------------------------------------------------------
# bandwidth calculator
# ---------------------------------------------------------------------------------------
BATCH_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128)
#: the calculator's choices of bytes per parameter and per KV element: (label, bytes)
PARAM_BYTES = [("fp32: 4", 4), ("fp16/bf16: 2", 2), ("int8/fp8: 1", 1)]
KV_BYTES = [("fp16: 2", 2), ("fp8: 1", 1), ("fp32: 4", 4)]


@dataclass(frozen=True)
class BandwidthState:
    """The streaming-read bound of ``budget`` at ``batch``, and along ``BATCH_SWEEP``.

    step: ``DecodeBudget.step(batch)``; batches [B]; lower_bound_ms, aggregate_ceiling,
    per_request_ceiling [B]; aggregate_limit: B / kv_bytes, the aggregate ceiling as the batch
    grows without end (the weights' share of the reads vanishes).
    """

    budget: DecodeBudget
    batch: int
    step: dict
    batches: np.ndarray
    lower_bound_ms: np.ndarray
    aggregate_ceiling: np.ndarray
    per_request_ceiling: np.ndarray
    aggregate_limit: float


def bandwidth_state(budget: DecodeBudget | None = None, batch: int = 8) -> BandwidthState:
    budget = budget or DecodeBudget()
    steps = [budget.step(b) for b in BATCH_SWEEP]
    return BandwidthState(
        budget=budget,
        batch=batch,
        step=budget.step(batch),
        batches=np.array(BATCH_SWEEP),
        lower_bound_ms=np.array([s["lower_bound_ms"] for s in steps]),
        aggregate_ceiling=np.array([s["aggregate_token_rate_ceiling"] for s in steps]),
        per_request_ceiling=np.array([s["per_request_token_rate_ceiling"] for s in steps]),
        aggregate_limit=budget.bandwidth_bytes_per_second / budget.kv_bytes_per_request,
    )


def draw_bandwidth_view(state: BandwidthState, figure) -> None:
    """Left: the step-time lower bound against batch.  Right: the token-rate ceilings."""
    time_ax, rate_ax = figure.subplots(1, 2)
    step = state.step
    time_ax.plot(state.batches, state.lower_bound_ms, marker="o", markersize=3)
    time_ax.scatter(
        [state.batch],
        [step["lower_bound_ms"]],
        color="tab:red",
        zorder=3,
        label=f"batch {state.batch}: ≥ {step['lower_bound_ms']:.2f} ms",
    )
    time_ax.axhline(
        state.budget.weight_bytes / state.budget.bandwidth_bytes_per_second * 1000,
        color="0.5",
        linestyle=":",
        linewidth=1,
        label="weights alone",
    )
    time_ax.set_xscale("log", base=2)
    time_ax.set_xlabel("batch (requests)")
    time_ax.set_ylabel("ms per decode step (lower bound)")
    time_ax.set_title("streaming-read lower bound, not a measurement", fontsize=10)
    time_ax.legend(fontsize=8)

    rate_ax.plot(state.batches, state.aggregate_ceiling, marker="o", markersize=3, label="aggregate")
    rate_ax.plot(state.batches, state.per_request_ceiling, marker="o", markersize=3, label="per request")
    rate_ax.axhline(
        state.aggregate_limit,
        color="0.5",
        linestyle=":",
        linewidth=1,
        label=f"B / KV bytes = {state.aggregate_limit:.0f}",
    )
    rate_ax.scatter(
        [state.batch, state.batch],
        [step["aggregate_token_rate_ceiling"], step["per_request_token_rate_ceiling"]],
        color="tab:red",
        zorder=3,
    )
    rate_ax.set_xscale("log", base=2)
    rate_ax.set_yscale("log")
    rate_ax.set_xlabel("batch (requests)")
    rate_ax.set_ylabel("tokens/s (ceiling)")
    rate_ax.set_title(
        f"batch {state.batch}: ≤ {step['aggregate_token_rate_ceiling']:.2f} total, "
        f"≤ {step['per_request_token_rate_ceiling']:.2f} each",
        fontsize=10,
    )
    rate_ax.legend(fontsize=8)


def bandwidth_figure(state: BandwidthState | None = None):
    """The bandwidth calculator's view (default: the 7B fp16 example at batch 8) as a pyplot figure."""
    return static_figure(draw_bandwidth_view, state or bandwidth_state())


class BandwidthCalculator(WidgetView):
    """Model size, bytes per parameter, KV layout, context, batch and bandwidth → ``state``."""

    def __init__(self, state: BandwidthState, render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.state, budget = state, state.budget
        style = {"description_width": "150px"}
        self.params_billions = widgets.FloatText(value=budget.n_params / 1e9, description="parameters (B)", style=style)
        self.bytes_per_param = widgets.Dropdown(
            options=PARAM_BYTES, value=budget.bytes_per_param, description="bytes / parameter", style=style
        )
        self.layers = widgets.IntText(value=budget.n_layers, description="layers", style=style)
        self.kv_heads = widgets.IntText(value=budget.n_kv_heads, description="KV heads", style=style)
        self.head_dim = widgets.IntText(value=budget.head_dim, description="head size", style=style)
        self.context = widgets.IntText(value=budget.context, description="context (tokens)", style=style)
        self.kv_bytes = widgets.Dropdown(
            options=KV_BYTES, value=budget.kv_bytes_per_element, description="bytes / KV element", style=style
        )
        self.batch = widgets.IntText(value=state.batch, description="batch", style=style)
        self.bandwidth_tb = widgets.FloatText(
            value=budget.bandwidth_bytes_per_second / 1e12, description="bandwidth (TB/s)", style=style
        )
        self.controls = [
            self.params_billions,
            self.bytes_per_param,
            self.layers,
            self.kv_heads,
            self.head_dim,
            self.context,
            self.kv_bytes,
            self.batch,
            self.bandwidth_tb,
        ]
        self._assemble(
            self.controls, [widgets.HBox([widgets.VBox(self.controls[:5]), widgets.VBox(self.controls[5:])])]
        )

    def _budget(self) -> DecodeBudget:
        """The budget the controls describe (a ValueError when they describe none)."""
        return DecodeBudget(
            n_params=int(round(self.params_billions.value * 1e9)),
            bytes_per_param=self.bytes_per_param.value,
            n_layers=self.layers.value,
            context=self.context.value,
            n_kv_heads=self.kv_heads.value,
            head_dim=self.head_dim.value,
            kv_bytes_per_element=self.kv_bytes.value,
            bandwidth_bytes_per_second=int(round(self.bandwidth_tb.value * 1e12)),
        )

    def update(self, change=None) -> None:
        self._show(
            lambda: bandwidth_state(self._budget(), self.batch.value),
            draw_bandwidth_view,
            lambda s: (
                f"weights {s.budget.weight_bytes:,} B · KV {s.budget.kv_bytes_per_request:,} B per request · "
                f"read {s.step['read_bytes']:,} B per step → <b>≥ {s.step['lower_bound_ms']:.3f} ms</b>, "
                f"≤ {s.step['aggregate_token_rate_ceiling']:.2f} tok/s in total "
                f"(a lower bound from arithmetic, not a measurement)"
            ),
        )


def bandwidth_calculator(render: bool = True, **settings) -> BandwidthCalculator:
    """The calculator, starting from ``bandwidth_state(**settings)`` (default: the lab's budget, batch 8)."""
    return BandwidthCalculator(bandwidth_state(**settings), render)
