"""Widgets of the preference-learning labs: the DPO margin curve (lab 06) and the GRPO group editor (lab 07).

Each widget has a *state* (a frozen dataclass computed by the labs' own functions), a
*drawing function* ``draw_*_view(state, figure)``, and a small ipywidgets front end whose
picture is that drawing rendered to PNG (the shared front end is
``labkit.reader.widgets.lab_base.WidgetView``).  The static book calls ``*_figure()`` on the
default state, so the widget and its static figure can never disagree.  ipywidgets and
matplotlib are imported inside functions only.

    editor = grpo_group_editor();      editor.state.sample_advantage  # [K]
    curve = dpo_margin_curve();        curve.state.loss
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labkit.labs import dpo, grpo
from labkit.reader.widgets.lab_base import WidgetView, fmt_numbers, parse_numbers, static_figure


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
        rewards=r,
        eps=float(eps),
        population_advantage=grpo.group_advantages(group, ddof=0, eps=eps)[0],
        sample_advantage=grpo.group_advantages(group, ddof=1, eps=eps)[0],
        centred=r - r.mean(),
        population_std=float(r.std()),
        sample_std=float(r.std(ddof=1)),
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
    bars.set_title(
        f"ε = {state.eps:g}: std {state.population_std:.4f} (ddof 0), {state.sample_std:.4f} (ddof 1)", fontsize=10
    )
    bars.legend(fontsize=8)
    rewards_ax.bar(index, state.rewards, color="tab:purple")
    rewards_ax.set_xticks(index)
    rewards_ax.set_xlabel("answer")
    rewards_ax.set_title("rewards", fontsize=10)


def grpo_group_figure(state: GroupState | None = None):
    """The GRPO group editor's view (default: rewards 0 0 1 1, ε = 1e-8) as a pyplot figure."""
    return static_figure(draw_group_view, state or group_state())


class GroupEditor(WidgetView):
    """Edit one group's rewards and ε; ``state`` holds the three advantage vectors."""

    EPSILONS = (1e-8, 1e-6, 1e-4, 1e-2, 1e-1)

    def __init__(self, rewards=(0.0, 0.0, 1.0, 1.0), eps: float = grpo.EPSILON, render: bool = True):
        import ipywidgets as widgets

        self.render = render
        self.state: GroupState = group_state(rewards, eps)
        self.rewards_text = widgets.Text(
            value=fmt_numbers(rewards),
            description="rewards",
            layout=widgets.Layout(width="420px"),
            continuous_update=False,
        )
        options = sorted(set(self.EPSILONS) | {float(eps)})
        self.eps_choice = widgets.SelectionSlider(
            options=[(f"{e:g}", e) for e in options], value=float(eps), description="ε"
        )
        self._assemble([self.rewards_text, self.eps_choice])

    def update(self, change=None) -> None:
        rewards = self.rewards_text.value
        self._show(
            lambda: group_state(parse_numbers("rewards", rewards), self.eps_choice.value),
            draw_group_view,
            lambda s: (
                f"ddof 0: {fmt_numbers(np.round(s.population_advantage, 6))} · "
                f"ddof 1: {fmt_numbers(np.round(s.sample_advantage, 6))}"
            ),
        )


def grpo_group_editor(rewards=(0.0, 0.0, 1.0, 1.0), eps: float = grpo.EPSILON, render: bool = True) -> GroupEditor:
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


def margin_state(policy=dpo.POLICY_LOG_PROBS, reference=dpo.REFERENCE_LOG_PROBS, beta: float = dpo.BETA) -> MarginState:
    loss = dpo.dpo_loss(policy, reference, beta)  # validates all three
    policy = np.asarray(policy, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    margin = dpo.dpo_margin(policy, reference, beta)
    deltas = np.linspace(-15.0, 15.0, 301)
    return MarginState(
        policy=policy,
        reference=reference,
        beta=float(beta),
        margin=margin,
        loss=loss,
        gradient=dpo.dpo_gradient(policy, reference, beta),
        deltas=deltas,
        curve_loss=np.logaddexp(0.0, -beta * deltas),
        curve_pull=beta / (1.0 + np.exp(beta * deltas)),
    )


def draw_margin_view(state: MarginState, figure) -> None:
    """Left: L against the log-ratio difference Δ.  Right: the push β·σ(−m) against Δ."""
    loss_ax, pull_ax = figure.subplots(1, 2)
    delta = state.margin / state.beta
    loss_ax.plot(state.deltas, state.curve_loss)
    loss_ax.scatter(
        [delta], [state.loss], color="tab:red", zorder=3, label=f"m = {state.margin:.3f}, L = {state.loss:.4f}"
    )
    loss_ax.axvline(0, color="0.6", linewidth=0.8)
    loss_ax.set_xlabel("Δ = (π_w − ref_w) − (π_l − ref_l)  (nats)")
    loss_ax.set_ylabel("DPO loss (nats)")
    loss_ax.set_title(f"L = log(1 + exp(−β·Δ)), β = {state.beta:g}", fontsize=10)
    loss_ax.legend(fontsize=8)
    pull_ax.plot(state.deltas, state.curve_pull, color="tab:green")
    pull_ax.scatter(
        [delta],
        [abs(state.gradient[0])],
        color="tab:red",
        zorder=3,
        label=f"|∂L/∂log π| = {abs(state.gradient[0]):.4f}",
    )
    pull_ax.set_xlabel("Δ (nats)")
    pull_ax.set_ylabel("β·σ(−m)")
    pull_ax.set_title("how hard the pair still pushes", fontsize=10)
    pull_ax.set_ylim(0, state.beta * 1.05)
    pull_ax.legend(fontsize=8)


def dpo_margin_figure(state: MarginState | None = None):
    """The DPO margin curve's view (default: the lab's pair, β = 0.2) as a pyplot figure."""
    return static_figure(draw_margin_view, state or margin_state())


class MarginCurve(WidgetView):
    """Sliders for the policy's two log-probs and β; ``state`` is the point on the curve."""

    def __init__(
        self,
        policy=dpo.POLICY_LOG_PROBS,
        reference=dpo.REFERENCE_LOG_PROBS,
        beta: float = dpo.BETA,
        render: bool = True,
    ):
        import ipywidgets as widgets

        self.render = render
        self.reference = tuple(float(r) for r in reference)
        self.state: MarginState = margin_state(policy, self.reference, beta)
        style = {"description_width": "170px"}
        self.chosen, self.rejected = (
            widgets.FloatSlider(
                value=value,
                min=-10.0,
                max=-0.1,
                step=0.1,
                description=f"log π_θ({answer})",
                style=style,
                continuous_update=False,
            )
            for value, answer in zip(policy, ("chosen", "rejected"), strict=True)
        )
        self.beta = widgets.FloatSlider(
            value=beta, min=0.05, max=1.0, step=0.05, description="β", style=style, continuous_update=False
        )
        self._assemble([self.chosen, self.rejected, self.beta])

    def update(self, change=None) -> None:
        self._show(
            lambda: margin_state([self.chosen.value, self.rejected.value], self.reference, self.beta.value),
            draw_margin_view,
            lambda s: (
                f"reference {list(self.reference)} · margin {s.margin:.4f} · loss {s.loss:.6f} · "
                f"gradient {fmt_numbers(np.round(s.gradient, 6))}"
            ),
        )


def dpo_margin_curve(
    policy=dpo.POLICY_LOG_PROBS, reference=dpo.REFERENCE_LOG_PROBS, beta: float = dpo.BETA, render: bool = True
) -> MarginCurve:
    return MarginCurve(policy, reference, beta, render)
