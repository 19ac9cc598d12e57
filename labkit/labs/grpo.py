"""Lab ``grpo``: group-relative advantages and the PPO clipped objective, as frozen numbers.

GRPO samples K answers per prompt and standardises each answer's reward r_i inside its
group (no value network):

    Â_i = (r_i − mean(r)) / (std(r) + ε)        std with ddof 0 (population) or 1 (sample)

PPO's clipped surrogate for one token with probability ratio ρ = π_θ/π_old and advantage Â:

    J = min(ρ·Â, clip(ρ, 1 − ε_clip, 1 + ε_clip)·Â)

No policy is trained here: the advantages and ratios are fixed arrays.
"""

import numpy as np

from labkit.core.guards import real_number, real_values
from labkit.labs.common import require_close

#: The source's three groups of four rewards: a split group, an all-correct and an all-wrong one.
REWARDS = ((0.0, 0.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0), (0.0, 0.0, 0.0, 0.0))
EPSILON = 1e-8
#: A reordering of each group's answers (advantages must follow their answers).
PERMUTATION = (3, 0, 2, 1)
#: PPO clip case: two ratios above 1 + ε_clip, two below 1 − ε_clip, advantages of both signs.
RATIOS = (1.5, 1.5, 0.5, 0.5)
ADVANTAGES = (2.0, -2.0, 2.0, -2.0)
CLIP = 0.2
NOTE = "advantages are frozen numeric values; this is not an actor training loop"


def group_advantages(rewards, ddof: int = 0, eps: float = EPSILON) -> np.ndarray:
    """Â = (r − mean(r)) / (std_ddof(r) + δ) within each group, δ = ``eps`` (ddof 0: population std, 1: sample);
    ``rewards``: [G, K] → [G, K].  A group of equal rewards gets zero advantage: it carries no signal."""
    r = _group_rewards(rewards, ddof, eps)  # [G, K] float64
    centred = r - r.mean(axis=1, keepdims=True)  # r − mean(r)
    spread = r.std(axis=1, ddof=ddof, keepdims=True) + eps  # std_ddof(r) + δ
    with np.errstate(invalid="ignore", divide="ignore"):
        advantages = centred / spread
    if not np.all(np.isfinite(advantages)):
        raise ValueError("a group with equal rewards and eps = 0 divides 0 by 0; use eps > 0")
    return advantages


def _group_rewards(rewards, ddof: int, eps: float) -> np.ndarray:
    """Finite rewards [G, K] as float64; ddof 0 or 1 (1 needs K ≥ 2); eps finite and ≥ 0."""
    r = real_values("rewards", rewards)
    if r.ndim != 2 or r.shape[1] < 1:
        raise ValueError(f"rewards must be [G, K] (groups × answers), got shape {list(r.shape)}")
    if not np.all(np.isfinite(r)):
        raise ValueError(f"rewards must be finite, got {r.tolist()}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population std) or 1 (sample std), got {ddof!r}")
    if ddof == 1 and r.shape[1] < 2:
        raise ValueError(f"the sample std (ddof 1) needs K ≥ 2 answers per group, got K = {r.shape[1]}")
    real_number("eps", eps, 0.0, expected="a finite number ≥ 0")
    return r


def ppo_clip_objective(ratio, advantage, clip: float = CLIP) -> np.ndarray:
    """J = min(ρ·Â, clip(ρ, 1 − ε, 1 + ε)·Â) element-wise; ``ratio``, ``advantage``: [N] → [N]."""
    rho, adv = _ratio_and_advantage(ratio, advantage, clip)  # [N], [N] float64
    unclipped = rho * adv  # ρ·Â
    clipped = np.clip(rho, 1 - clip, 1 + clip) * adv  # clip(ρ, 1 − ε, 1 + ε)·Â
    return np.minimum(unclipped, clipped)


def _ratio_and_advantage(ratio, advantage, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """Positive finite ratios and advantages of one shape, as float64; clip in (0, 1)."""
    rho, adv = real_values("ratio", ratio), real_values("advantage", advantage, finite=True)
    if rho.shape != adv.shape:
        raise ValueError(f"ratio and advantage must have one shape, got {list(rho.shape)} and {list(adv.shape)}")
    if np.any(~np.isfinite(rho)) or np.any(rho <= 0):
        raise ValueError(f"ratio must hold positive probability ratios π_θ/π_old, got {rho.tolist()}")
    if not 0 < clip < 1:
        raise ValueError(f"clip must be in (0, 1), got {clip!r}")
    return rho, adv


def dual_clip_objective(ratio, advantage, clip: float = CLIP, dual: float = 3.0) -> np.ndarray:
    """J_dual = max(J, dual·Â) where Â < 0, J elsewhere (dual > 1); [N] → [N].  Plain PPO's J is unbounded
    below for Â < 0 as ρ grows: one stale token with a huge ratio would dominate the batch."""
    if not dual > 1:
        raise ValueError(f"dual must be > 1 (the floor sits at dual·Â below the clip), got {dual!r}")
    adv = np.asarray(advantage, dtype=np.float64)
    objective = ppo_clip_objective(ratio, adv, clip)
    return np.where(adv < 0, np.maximum(objective, dual * adv), objective)


def clip_gradient(ratio, advantage, clip: float = CLIP) -> np.ndarray:
    """∂J/∂ρ of the clipped objective: Â where the unclipped term is chosen, 0 where clipped; [N] → [N]."""
    rho, adv = _ratio_and_advantage(ratio, advantage, clip)
    clipped = ppo_clip_objective(rho, adv, clip) != rho * adv
    return np.where(clipped, 0.0, adv)


def _clip_by_case(rho: np.ndarray, adv: np.ndarray, clip: float) -> np.ndarray:
    """The same objective read case by case: Â ≥ 0 caps ρ at 1 + ε, Â < 0 floors it at 1 − ε."""
    return np.where(adv >= 0, np.minimum(rho, 1 + clip) * adv, np.maximum(rho, 1 - clip) * adv)


def run(
    rewards=REWARDS,
    eps: float = EPSILON,
    permutation=PERMUTATION,
    ratio=RATIOS,
    advantage=ADVANTAGES,
    clip: float = CLIP,
) -> dict:
    """The source report's ``grpo`` object.  Checks: a half-0, half-1 group standardises to ±1 with the
    population std (within 3e-8, δ's effect), equal rewards to 0; reordering answers reorders advantages; the clipped
    objective equals its case-by-case reading."""
    r = np.asarray(rewards, dtype=np.float64)
    population = group_advantages(r, ddof=0, eps=eps)
    sample = group_advantages(r, ddof=1, eps=eps)
    order = np.asarray(permutation)
    if sorted(order.tolist()) != list(range(r.shape[1])):
        raise ValueError(f"permutation must reorder 0..{r.shape[1] - 1}, got {order.tolist()}")

    for g, group in enumerate(r):
        values, counts = np.unique(group, return_counts=True)  # distinct rewards, how many of each
        if values.size == 1:
            # exact zeros when the mean is exact (0/1 rewards); otherwise the mean's rounding
            # error (~1e-16) divided by ε = 1e-8 leaves ~1e-8
            exact_mean = bool(np.all(group == group.mean()))
            require_close(
                f"grpo group {g} (equal rewards) advantage vs 0",
                population[g],
                np.zeros_like(group),
                atol=0.0 if exact_mean else 1e-6,
            )
        elif values.size == 2 and counts[0] * 2 == group.size:
            # half low, half high: population std is half the gap, so Â = ±1 (up to ε)
            require_close(
                f"grpo group {g} population advantage vs ±1",
                population[g],
                np.where(group == values[1], 1.0, -1.0),
                atol=3e-8,
            )
    require_close(
        "grpo advantages of reordered answers vs reordered advantages",
        group_advantages(r[:, order], eps=eps),
        population[:, order],
        rtol=1e-7,
    )

    rho, adv = _ratio_and_advantage(ratio, advantage, clip)
    objective = ppo_clip_objective(rho, adv, clip)
    require_close(
        "grpo clipped objective vs its case-by-case reading", objective, _clip_by_case(rho, adv, clip), rtol=1e-12
    )
    return {
        "rewards": r.tolist(),
        "population_std": r.std(axis=1).tolist(),
        "population_advantage": population.tolist(),
        "sample_advantage": sample.tolist(),
        "epsilon": eps,
        "ppo_clip_objectives": objective.tolist(),
        "note": NOTE,
    }
