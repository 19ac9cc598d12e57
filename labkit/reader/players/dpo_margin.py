"""The DPO margin player's data (lab 06): the loss curve L(Δ) and the push β·σ(−m) for each β, and the
pair's margin, loss and gradient at each grid point of (β, log π_w, log π_l), from ``labkit.labs.dpo``
(a kernel adds values outside the grid).

    data = {"player": "dpo_margin", "title", "reference": [2], "axes": {"chosen": [str], "rejected": [str],
            "beta": [str]}, "start": {axis: str}, "deltas": [N],
            "curves": {beta: {"loss": [N], "pull": [N]}},
            "points": {"beta|chosen|rejected": [margin, loss, ∂L/∂log π_w, ∂L/∂log π_l]}}
"""

import numpy as np

from labkit.core.guards import real_number
from labkit.labs import dpo
from labkit.reader.players.data import grid, label, r4, words

CHOSEN = tuple(float(v) for v in np.arange(-6.0, -0.25, 0.5))  # −6 … −0.5 nats, the lab's −2 and −3 on it
BETAS = (0.05, 0.1, 0.2, 0.5, 1.0)
DELTAS = np.linspace(-15.0, 15.0, 121)  # Δ = (π_w − ref_w) − (π_l − ref_l), nats


def curve(beta: float) -> dict:
    """L and |∂L/∂log π_w| along Δ, each a kernel call on a pair of log-probs with that Δ
    (policy −16 ± Δ/2 against a reference of −16 each: L depends on Δ alone)."""
    pairs = [([-16.0 + d / 2, -16.0 - d / 2], [-16.0, -16.0]) for d in DELTAS]
    return {
        "loss": [r4(dpo.dpo_loss(p, r, beta)) for p, r in pairs],
        "pull": [r4(abs(dpo.dpo_gradient(p, r, beta)[0])) for p, r in pairs],
    }


def point(chosen: float, rejected: float, beta: float, reference=dpo.REFERENCE_LOG_PROBS) -> list:
    policy = [chosen, rejected]
    gradient = dpo.dpo_gradient(policy, reference, beta)
    margin = dpo.dpo_margin(np.asarray(policy), np.asarray(reference, dtype=np.float64), beta)
    return [r4(margin), r4(dpo.dpo_loss(policy, reference, beta)), r4(gradient[0]), r4(gradient[1])]


def static_data(chosen=CHOSEN, rejected=CHOSEN, betas=BETAS, start=None, reference=dpo.REFERENCE_LOG_PROBS) -> dict:
    """Every grid point of (β, log π_θ(chosen), log π_θ(rejected)) through the lab's kernels."""
    chosen, rejected, betas = (sorted({float(v) for v in axis}) for axis in (chosen, rejected, betas))
    start = start or {"chosen": dpo.POLICY_LOG_PROBS[0], "rejected": dpo.POLICY_LOG_PROBS[1], "beta": dpo.BETA}
    return {
        "title": words("DPO: the loss and the push along the margin (lab 06)", "DPO：损失与沿间隔的推力（实验 06）"),
        "reference": [float(r) for r in reference],
        "axes": {
            "chosen": list(map(label, chosen)),
            "rejected": list(map(label, rejected)),
            "beta": list(map(label, betas)),
        },
        "start": {name: label(float(value)) for name, value in start.items()},
        "deltas": [r4(d) for d in DELTAS],
        "curves": {label(b): curve(b) for b in betas},
        "points": grid(
            {"beta": betas, "chosen": chosen, "rejected": rejected}, lambda b, c, r: point(c, r, b, reference)
        ),
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"chosen", "rejected", "beta"}`` (any of them, numbers): added to the grid and shown."""
    axes = {name: [float(v) for v in data["axes"][name]] for name in ("chosen", "rejected", "beta")}
    start = {name: float(data["start"][name]) for name in axes}
    for name in (n for n in axes if n in request):
        start[name] = real_number(name, request[name], expected="a number")
        axes[name].append(start[name])
    return static_data(axes["chosen"], axes["rejected"], axes["beta"], start, data["reference"])
