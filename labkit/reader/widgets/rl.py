"""Widgets of labs II: speculative sampler, bandwidth calculator, GRPO group editor, DPO margin curve.

Each widget has a *state* (a frozen dataclass computed by the labs' own functions), a
*drawing function* ``draw_*_view(state, figure)``, and a small ipywidgets front end whose
picture is that drawing rendered to PNG (the shared front end is
``labkit.reader.widgets.lab_base.WidgetView``).  The static book calls ``*_figure()`` on the
default state, so the widget and its static figure can never disagree.  ipywidgets and
matplotlib are imported inside functions only.

    sampler = speculative_sampler();   sampler.state.observed        # Monte Carlo frequencies [V]
    calc = bandwidth_calculator();     calc.state.step["lower_bound_ms"]
    editor = grpo_group_editor();      editor.state.sample_advantage  # [K]
    curve = dpo_margin_curve();        curve.state.loss
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from labkit.labs import dpo, grpo, speculative
from labkit.labs.bandwidth import DecodeBudget
from labkit.reader import new_figure
from labkit.reader.widgets.lab_base import WidgetView


def parse_numbers(name: str, text: str) -> np.ndarray:
    """"0.6 0.3 0.1" or "0.6, 0.3, 0.1" → float array; ``name`` says which box was wrong."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    try:
        values = np.array([float(p) for p in parts], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{name} must be numbers separated by spaces or commas, got {text!r}") from None
    if values.size == 0:
        raise ValueError(f"{name} needs at least one number, got {text!r}")
    return values


def _fmt(values) -> str:
    return " ".join(f"{v:g}" for v in np.asarray(values, dtype=np.float64))


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


def speculative_state(p=speculative.TARGET, q=speculative.DRAFT, samples: int = 200_000,
                      seed: int = speculative.SEED, fallback: str = "residual") -> SpeculativeState:
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
        p=target, q=np.asarray(q, dtype=np.float64), fallback=fallback, samples=int(samples), seed=int(seed),
        mass=mass, refill=refill, output=output, observed=drawn.observed,
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
    exact.bar(tokens, refill_mass, bottom=state.mass.accepted_mass,
              color="tab:orange" if state.fallback == "residual" else "tab:red", label=label)
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
    simulated.bar(tokens + width / 2, state.observed, width,
                  color="tab:green" if state.standard_errors < speculative.SIGMA_BOUND else "tab:red",
                  label=f"observed ({state.samples} draws)")
    simulated.set_xticks(tokens)
    simulated.set_xlabel("token")
    simulated.set_ylim(0, top * 1.35)
    simulated.set_title(f"seed {state.seed}: acceptance {state.acceptance_rate:.4f}, "
                        f"max {state.standard_errors:.1f} σ", fontsize=10)
    simulated.legend(fontsize=8, loc="upper right")


def speculative_figure(state: SpeculativeState | None = None):
    """The speculative sampler's view (default: the lab's p, q, seed 73, 200 000 draws) as a pyplot figure."""
    figure = new_figure(True, (9.0, 3.4))
    draw_speculative_view(state or speculative_state(), figure)
    return figure


class SpeculativeSampler(WidgetView):
    """Edit p and q, the number of draws and the fallback; ``state`` follows the edits."""

    def __init__(self, p=speculative.TARGET, q=speculative.DRAFT, samples: int = 200_000,
                 seed: int = speculative.SEED, fallback: str = "residual", render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.state: SpeculativeState = speculative_state(p, q, samples, seed, fallback)
        layout = widgets.Layout(width="420px")
        self.p_text = widgets.Text(value=_fmt(p), description="target p", layout=layout,
                                   continuous_update=False)
        self.q_text = widgets.Text(value=_fmt(q), description="draft q", layout=layout,
                                   continuous_update=False)
        self.samples_slider = widgets.IntSlider(value=samples, min=1_000, max=400_000, step=1_000,
                                                description="draws", continuous_update=False)
        self.seed_box = widgets.IntText(value=seed, description="seed")
        self.wrong_fallback = widgets.Checkbox(value=fallback == "target",
                                               description="wrong fallback: refill from p")
        self.message = widgets.HTML()
        self.image = widgets.Image(format="png")
        for control in (self.p_text, self.q_text, self.samples_slider, self.seed_box, self.wrong_fallback):
            control.observe(self.update, names="value")
        self.box = widgets.VBox([self.p_text, self.q_text, self.samples_slider, self.seed_box,
                                 self.wrong_fallback, self.message, self.image])
        self.update()

    def update(self, change=None) -> None:
        """Recompute from the controls and redraw; bad input shows its error and keeps the old state."""
        try:
            self.state = speculative_state(
                parse_numbers("target p", self.p_text.value), parse_numbers("draft q", self.q_text.value),
                self.samples_slider.value, self.seed_box.value,
                "target" if self.wrong_fallback.value else "residual")
        except ValueError as exc:
            self._refuse(exc)
            return
        self.error = None
        s = self.state
        self.message.value = (f"α = {_fmt(np.round(s.mass.accept_probability, 4))} · "
                              f"β = {s.mass.reject_probability:.4f} · exact output = {_fmt(np.round(s.output, 4))}")
        self._draw(draw_speculative_view, s)


def speculative_sampler(p=speculative.TARGET, q=speculative.DRAFT, samples: int = 200_000,
                        seed: int = speculative.SEED, fallback: str = "residual",
                        render: bool = True) -> SpeculativeSampler:
    return SpeculativeSampler(p, q, samples, seed, fallback, render)


# ---------------------------------------------------------------------------------------
# bandwidth calculator
# ---------------------------------------------------------------------------------------
BATCH_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128)


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
        budget=budget, batch=batch, step=budget.step(batch), batches=np.array(BATCH_SWEEP),
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
    time_ax.scatter([state.batch], [step["lower_bound_ms"]], color="tab:red", zorder=3,
                    label=f"batch {state.batch}: ≥ {step['lower_bound_ms']:.2f} ms")
    time_ax.axhline(state.budget.weight_bytes / state.budget.bandwidth_bytes_per_second * 1000,
                    color="0.5", linestyle=":", linewidth=1, label="weights alone")
    time_ax.set_xscale("log", base=2)
    time_ax.set_xlabel("batch (requests)")
    time_ax.set_ylabel("ms per decode step (lower bound)")
    time_ax.set_title("streaming-read lower bound, not a measurement", fontsize=10)
    time_ax.legend(fontsize=8)

    rate_ax.plot(state.batches, state.aggregate_ceiling, marker="o", markersize=3, label="aggregate")
    rate_ax.plot(state.batches, state.per_request_ceiling, marker="o", markersize=3, label="per request")
    rate_ax.axhline(state.aggregate_limit, color="0.5", linestyle=":", linewidth=1,
                    label=f"B / KV bytes = {state.aggregate_limit:.0f}")
    rate_ax.scatter([state.batch, state.batch],
                    [step["aggregate_token_rate_ceiling"], step["per_request_token_rate_ceiling"]],
                    color="tab:red", zorder=3)
    rate_ax.set_xscale("log", base=2)
    rate_ax.set_yscale("log")
    rate_ax.set_xlabel("batch (requests)")
    rate_ax.set_ylabel("tokens/s (ceiling)")
    rate_ax.set_title(f"batch {state.batch}: ≤ {step['aggregate_token_rate_ceiling']:.2f} total, "
                      f"≤ {step['per_request_token_rate_ceiling']:.2f} each", fontsize=10)
    rate_ax.legend(fontsize=8)


def bandwidth_figure(state: BandwidthState | None = None):
    """The bandwidth calculator's view (default: the 7B fp16 example at batch 8) as a pyplot figure."""
    figure = new_figure(True, (9.0, 3.4))
    draw_bandwidth_view(state or bandwidth_state(), figure)
    return figure


class BandwidthCalculator(WidgetView):
    """Model size, bytes per parameter, KV layout, context, batch and bandwidth → ``state``."""

    def __init__(self, budget: DecodeBudget | None = None, batch: int = 8, render: bool = True):
        import ipywidgets as widgets

        self.render = render
        budget = budget or DecodeBudget()
        self.state: BandwidthState = bandwidth_state(budget, batch)
        style = {"description_width": "150px"}
        self.params_billions = widgets.FloatText(value=budget.n_params / 1e9, description="parameters (B)", style=style)
        self.bytes_per_param = widgets.Dropdown(options=[("fp32: 4", 4), ("fp16/bf16: 2", 2), ("int8/fp8: 1", 1)],
                                                value=budget.bytes_per_param, description="bytes / parameter",
                                                style=style)
        self.layers = widgets.IntText(value=budget.n_layers, description="layers", style=style)
        self.kv_heads = widgets.IntText(value=budget.n_kv_heads, description="KV heads", style=style)
        self.head_dim = widgets.IntText(value=budget.head_dim, description="head size", style=style)
        self.context = widgets.IntText(value=budget.context, description="context (tokens)", style=style)
        self.kv_bytes = widgets.Dropdown(options=[("fp16: 2", 2), ("fp8: 1", 1), ("fp32: 4", 4)],
                                         value=budget.kv_bytes_per_element, description="bytes / KV element",
                                         style=style)
        self.batch = widgets.IntText(value=batch, description="batch", style=style)
        self.bandwidth_tb = widgets.FloatText(value=budget.bandwidth_bytes_per_second / 1e12,
                                              description="bandwidth (TB/s)", style=style)
        self.message = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.controls = [self.params_billions, self.bytes_per_param, self.layers, self.kv_heads,
                         self.head_dim, self.context, self.kv_bytes, self.batch, self.bandwidth_tb]
        for control in self.controls:
            control.observe(self.update, names="value")
        self.box = widgets.VBox([widgets.HBox([widgets.VBox(self.controls[:5]), widgets.VBox(self.controls[5:])]),
                                 self.message, self.image])
        self.update()

    def update(self, change=None) -> None:
        try:
            budget = DecodeBudget(
                n_params=int(round(self.params_billions.value * 1e9)), bytes_per_param=self.bytes_per_param.value,
                n_layers=self.layers.value, context=self.context.value, n_kv_heads=self.kv_heads.value,
                head_dim=self.head_dim.value, kv_bytes_per_element=self.kv_bytes.value,
                bandwidth_bytes_per_second=int(round(self.bandwidth_tb.value * 1e12)))
            self.state = bandwidth_state(budget, self.batch.value)
        except ValueError as exc:
            self._refuse(exc)
            return
        self.error = None
        step, b = self.state.step, self.state.budget
        self.message.value = (f"weights {b.weight_bytes:,} B · KV {b.kv_bytes_per_request:,} B per request · "
                              f"read {step['read_bytes']:,} B per step → <b>≥ {step['lower_bound_ms']:.3f} ms</b>, "
                              f"≤ {step['aggregate_token_rate_ceiling']:.2f} tok/s in total "
                              f"(a lower bound from arithmetic, not a measurement)")
        self._draw(draw_bandwidth_view, self.state)


def bandwidth_calculator(budget: DecodeBudget | None = None, batch: int = 8,
                         render: bool = True) -> BandwidthCalculator:
    return BandwidthCalculator(budget, batch, render)


# ---------------------------------------------------------------------------------------
# GRPO group editor
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GroupState:
    """Advantages of one group of K answers under three normalisations.

    rewards [K]; eps; population_advantage [K] (std ddof 0 + ε), sample_advantage [K]
    (ddof 1 + ε), centred [K] (r − mean, no std division); population_std, sample_std.
    """

    rewards: np.ndarray
    eps: float
    population_advantage: np.ndarray
    sample_advantage: np.ndarray
    centred: np.ndarray
    population_std: float
    sample_std: float


def group_state(rewards=(0.0, 0.0, 1.0, 1.0), eps: float = grpo.EPSILON) -> GroupState:
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 1 or r.size < 2:
        raise ValueError(f"rewards must be one group of at least 2 answers, got {r.tolist()}")
    group = r[np.newaxis]
    return GroupState(
        rewards=r, eps=float(eps),
        population_advantage=grpo.group_advantages(group, ddof=0, eps=eps)[0],
        sample_advantage=grpo.group_advantages(group, ddof=1, eps=eps)[0],
        centred=r - r.mean(),
        population_std=float(r.std()), sample_std=float(r.std(ddof=1)),
    )


def draw_group_view(state: GroupState, figure) -> None:
    """Grouped bars per answer: Â with ddof 0, with ddof 1, and r − mean (no std division)."""
    bars, rewards_ax = figure.subplots(1, 2, gridspec_kw={"width_ratios": [2.2, 1]})
    k = state.rewards.size
    index = np.arange(k)
    width = 0.27
    bars.bar(index - width, state.population_advantage, width, label="ddof 0 (population)")
    bars.bar(index, state.sample_advantage, width, label="ddof 1 (sample)")
    bars.bar(index + width, state.centred, width, color="0.6", label="r − mean (no std)")
    bars.axhline(0, color="black", linewidth=0.8)
    bars.set_xticks(index)
    bars.set_xlabel("answer in the group")
    bars.set_ylabel("advantage Â")
    bars.set_title(f"ε = {state.eps:g}: std {state.population_std:.4f} (ddof 0), "
                   f"{state.sample_std:.4f} (ddof 1)", fontsize=10)
    bars.legend(fontsize=8)
    rewards_ax.bar(index, state.rewards, color="tab:purple")
    rewards_ax.set_xticks(index)
    rewards_ax.set_xlabel("answer")
    rewards_ax.set_title("rewards", fontsize=10)


def grpo_group_figure(state: GroupState | None = None):
    """The GRPO group editor's view (default: rewards 0 0 1 1, ε = 1e-8) as a pyplot figure."""
    figure = new_figure(True, (9.0, 3.4))
    draw_group_view(state or group_state(), figure)
    return figure


class GroupEditor(WidgetView):
    """Edit one group's rewards and ε; ``state`` holds the three advantage vectors."""

    EPSILONS = (1e-8, 1e-6, 1e-4, 1e-2, 1e-1)

    def __init__(self, rewards=(0.0, 0.0, 1.0, 1.0), eps: float = grpo.EPSILON, render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.state: GroupState = group_state(rewards, eps)
        self.rewards_text = widgets.Text(value=_fmt(rewards), description="rewards",
                                         layout=widgets.Layout(width="420px"), continuous_update=False)
        options = sorted(set(self.EPSILONS) | {float(eps)})
        self.eps_choice = widgets.SelectionSlider(options=[(f"{e:g}", e) for e in options], value=float(eps),
                                                  description="ε")
        self.message = widgets.HTML()
        self.image = widgets.Image(format="png")
        for control in (self.rewards_text, self.eps_choice):
            control.observe(self.update, names="value")
        self.box = widgets.VBox([self.rewards_text, self.eps_choice, self.message, self.image])
        self.update()

    def update(self, change=None) -> None:
        try:
            self.state = group_state(parse_numbers("rewards", self.rewards_text.value), self.eps_choice.value)
        except ValueError as exc:
            self._refuse(exc)
            return
        self.error = None
        s = self.state
        self.message.value = (f"ddof 0: {_fmt(np.round(s.population_advantage, 6))} · "
                              f"ddof 1: {_fmt(np.round(s.sample_advantage, 6))}")
        self._draw(draw_group_view, s)


def grpo_group_editor(rewards=(0.0, 0.0, 1.0, 1.0), eps: float = grpo.EPSILON,
                      render: bool = True) -> GroupEditor:
    return GroupEditor(rewards, eps, render)


# ---------------------------------------------------------------------------------------
# DPO margin curve
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MarginState:
    """One preference pair on the DPO loss curve.

    policy, reference [2] = [chosen, rejected] log-probs; beta; margin m; loss −log σ(m);
    gradient [2] (∂L/∂ log π of chosen, rejected); deltas [N]: log-ratio differences
    Δ = (π_w − ref_w) − (π_l − ref_l) along the curve; curve_loss, curve_pull [N]: L and
    β·σ(−βΔ) (how hard the pair still pushes) along it.
    """

    policy: np.ndarray
    reference: np.ndarray
    beta: float
    margin: float
    loss: float
    gradient: np.ndarray
    deltas: np.ndarray
    curve_loss: np.ndarray
    curve_pull: np.ndarray


def margin_state(policy=dpo.POLICY_LOG_PROBS, reference=dpo.REFERENCE_LOG_PROBS,
                 beta: float = dpo.BETA) -> MarginState:
    loss = dpo.dpo_loss(policy, reference, beta)           # validates all three
    policy = np.asarray(policy, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    margin = dpo.dpo_margin(policy, reference, beta)
    deltas = np.linspace(-15.0, 15.0, 301)
    return MarginState(
        policy=policy, reference=reference, beta=float(beta), margin=margin, loss=loss,
        gradient=dpo.dpo_gradient(policy, reference, beta), deltas=deltas,
        curve_loss=np.logaddexp(0.0, -beta * deltas),
        curve_pull=beta / (1.0 + np.exp(beta * deltas)),
    )


def draw_margin_view(state: MarginState, figure) -> None:
    """Left: L against the log-ratio difference Δ.  Right: the push β·σ(−m) against Δ."""
    loss_ax, pull_ax = figure.subplots(1, 2)
    delta = state.margin / state.beta
    loss_ax.plot(state.deltas, state.curve_loss)
    loss_ax.scatter([delta], [state.loss], color="tab:red", zorder=3,
                    label=f"m = {state.margin:.3f}, L = {state.loss:.4f}")
    loss_ax.axvline(0, color="0.6", linewidth=0.8)
    loss_ax.set_xlabel("Δ = (π_w − ref_w) − (π_l − ref_l)  (nats)")
    loss_ax.set_ylabel("DPO loss (nats)")
    loss_ax.set_title(f"L = log(1 + exp(−β·Δ)), β = {state.beta:g}", fontsize=10)
    loss_ax.legend(fontsize=8)
    pull_ax.plot(state.deltas, state.curve_pull, color="tab:green")
    pull_ax.scatter([delta], [abs(state.gradient[0])], color="tab:red", zorder=3,
                    label=f"|∂L/∂log π| = {abs(state.gradient[0]):.4f}")
    pull_ax.set_xlabel("Δ (nats)")
    pull_ax.set_ylabel("β·σ(−m)")
    pull_ax.set_title("how hard the pair still pushes", fontsize=10)
    pull_ax.set_ylim(0, state.beta * 1.05)
    pull_ax.legend(fontsize=8)


def dpo_margin_figure(state: MarginState | None = None):
    """The DPO margin curve's view (default: the lab's pair, β = 0.2) as a pyplot figure."""
    figure = new_figure(True, (9.0, 3.4))
    draw_margin_view(state or margin_state(), figure)
    return figure


class MarginCurve(WidgetView):
    """Sliders for the policy's two log-probs and β; ``state`` is the point on the curve."""

    def __init__(self, policy=dpo.POLICY_LOG_PROBS, reference=dpo.REFERENCE_LOG_PROBS, beta: float = dpo.BETA,
                 render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.reference = tuple(float(r) for r in reference)
        self.state: MarginState = margin_state(policy, self.reference, beta)
        style = {"description_width": "170px"}
        self.chosen = widgets.FloatSlider(value=policy[0], min=-10.0, max=-0.1, step=0.1,
                                          description="log π_θ(chosen)", style=style, continuous_update=False)
        self.rejected = widgets.FloatSlider(value=policy[1], min=-10.0, max=-0.1, step=0.1,
                                            description="log π_θ(rejected)", style=style, continuous_update=False)
        self.beta = widgets.FloatSlider(value=beta, min=0.05, max=1.0, step=0.05, description="β",
                                        style=style, continuous_update=False)
        self.message = widgets.HTML()
        self.image = widgets.Image(format="png")
        for control in (self.chosen, self.rejected, self.beta):
            control.observe(self.update, names="value")
        self.box = widgets.VBox([self.chosen, self.rejected, self.beta, self.message, self.image])
        self.update()

    def update(self, change=None) -> None:
        try:
            self.state = margin_state([self.chosen.value, self.rejected.value], self.reference, self.beta.value)
        except ValueError as exc:
            self._refuse(exc)
            return
        self.error = None
        s = self.state
        self.message.value = (f"reference {list(self.reference)} · margin {s.margin:.4f} · loss {s.loss:.6f} · "
                              f"gradient {_fmt(np.round(s.gradient, 6))}")
        self._draw(draw_margin_view, s)


def dpo_margin_curve(policy=dpo.POLICY_LOG_PROBS, reference=dpo.REFERENCE_LOG_PROBS,
                     beta: float = dpo.BETA, render: bool = True) -> MarginCurve:
    return MarginCurve(policy, reference, beta, render)
