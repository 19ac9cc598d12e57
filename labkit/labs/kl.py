"""Lab ``kl``: the Kullback–Leibler divergence is not symmetric, and can be infinite.

For discrete distributions p and q over the same outcomes,

    KL(p ‖ q) = Σ_{i: p_i > 0} p_i · log(p_i / q_i)      (nats; terms with p_i = 0 contribute 0)

It is ≥ 0, equals 0 exactly when p = q, differs in general from KL(q ‖ p), and is +∞ as soon
as p puts mass on an outcome q rules out (q_i = 0 < p_i).
"""

import math
from typing import NamedTuple

import numpy as np

from labkit.core.guards import real_values
from labkit.labs.common import require

#: The source's pair.
P = (0.8, 0.2)
Q = (0.5, 0.5)
#: A reference with no mass on the second outcome, where p has some.
ZERO_SUPPORT_P = (0.5, 0.5)
ZERO_SUPPORT_Q = (1.0, 0.0)
ZERO_SUPPORT_NOTE = "positive p on zero q gives infinity"


def as_distribution(name: str, values, atol: float = 1e-8) -> np.ndarray:
    """``values`` as a float64 probability vector [V]: finite, ≥ 0, summing to 1 within ``atol``."""
    dist = real_values(name, values)
    if dist.ndim != 1 or dist.size == 0:
        raise ValueError(f"{name} must be a 1-D probability vector, got shape {list(dist.shape)}")
    if not (np.isfinite(dist) & (dist >= 0)).all():
        raise ValueError(f"{name} must hold finite probabilities ≥ 0, got {dist.tolist()}")
    total = float(dist.sum())
    if not math.isclose(total, 1.0, rel_tol=0.0, abs_tol=atol):
        raise ValueError(f"{name} must sum to 1, got {dist.tolist()} summing to {total!r}")
    return dist


def same_outcomes(first: tuple[str, object], second: tuple[str, object]) -> tuple[np.ndarray, np.ndarray]:
    """Two (name, values) probability vectors over the same outcomes, checked and returned: [V] each."""
    (name_a, a), (name_b, b) = first, second
    a, b = as_distribution(name_a, a), as_distribution(name_b, b)
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must cover the same outcomes, got {a.size} and {b.size}")
    return a, b


def kl_divergence(p, q) -> float:
    """KL(p ‖ q) in nats for probability vectors ``p``, ``q``: [V]; ``inf`` if q_i = 0 < p_i."""
    p, q = same_outcomes(("p", p), ("q", q))
    support = p > 0
    if np.any(q[support] == 0):
        return math.inf
    p_s, q_s = p[support], q[support]
    return float(np.sum(p_s * np.log(p_s / q_s)))


def run(p=P, q=Q) -> dict:
    """The source report's ``kl`` object.  Checks: both directions ≥ 0 and different, KL(p ‖ p) = 0
    exactly, infinity on a reference that rules out an outcome p allows."""
    p, q = same_outcomes(("p", p), ("q", q))
    forward = kl_divergence(p, q)
    reverse = kl_divergence(q, p)
    require(forward >= 0 and reverse >= 0, f"kl: divergences must be ≥ 0, got forward {forward!r}, reverse {reverse!r}")
    require(
        not math.isclose(forward, reverse),
        f"kl: KL(p‖q) = {forward!r} and KL(q‖p) = {reverse!r} should differ for p = {p.tolist()}, q = {q.tolist()}",
    )
    identical = kl_divergence(p, p)
    require(identical == 0.0, f"kl: KL(p‖p) should be exactly 0, got {identical!r}")
    unbounded = kl_divergence(ZERO_SUPPORT_P, ZERO_SUPPORT_Q)
    require(math.isinf(unbounded), f"kl: p > 0 where q = 0 should give infinity, got {unbounded!r}")
    return {
        "p": p.tolist(),
        "q": q.tolist(),
        "forward_kl_nat": forward,
        "reverse_kl_nat": reverse,
        "identical_kl_nat": identical,
        "zero_reference_support": ZERO_SUPPORT_NOTE,
    }


def kl_estimators(log_ratio) -> dict[str, np.ndarray]:
    """Schulman's per-sample estimators of KL(q ‖ p) = E_q[−log r] from samples x ~ q (the model's own
    sampled tokens) and ``log_ratio`` = log r(x) = log(p(x)/q(x)): [N] → {name: [N]}.
        k1 = −log r             unbiased, can be negative, high variance
        k2 = ½·(log r)²         ≥ 0, biased (low bias when p ≈ q)
        k3 = (r − 1) − log r    ≥ 0, unbiased when E_q[r] = 1: p has no mass where q has none (GRPO's in-loss KL)"""
    log_r = np.asarray(log_ratio, dtype=np.float64)
    if not np.all(np.isfinite(log_r)):
        raise ValueError(f"log_ratio must be finite (p(x) > 0 wherever q samples), got {log_r.tolist()}")
    return {
        "k1": -log_r,
        "k2": 0.5 * log_r**2,
        "k3": np.expm1(log_r) - log_r,  # (r − 1) − log r, exact near r = 1
    }


def estimator_moments(sampled, other) -> dict[str, tuple[float, float]]:
    """Exact mean and standard deviation of k1, k2, k3 under x ~ ``sampled`` (the model q),
    with r = ``other``/``sampled`` (the target p); both [V].  The true value is KL(q ‖ p)."""
    q, p = same_outcomes(("sampled", sampled), ("other", other))
    support = q > 0
    if np.any(p[support] == 0):
        raise ValueError("other is 0 where sampled is not: log r = −∞ and KL(q ‖ p) is infinite")
    values = kl_estimators(np.log(p[support] / q[support]))
    return {name: moments(estimates, q[support]) for name, estimates in values.items()}


# --- one Gaussian q = N(μ, σ²) fitted to a two-mode target p, both as probability vectors on ``GRID``:
#     forward  KL(p ‖ q) = Σ p·log(p/q)   weighted by the target → mass-covering (μ, σ of p)
#     reverse  KL(q ‖ p) = Σ q·log(q/p)   weighted by the model → mode-seeking (q sits on one mode)
# No optimiser: an exhaustive search over MEANS × STDS returns grid values, the same on every machine.

#: Support of the densities: [X] = 321 points on [−8, 8], spacing 0.05; read-only, as every fit's default.
GRID = np.linspace(-8.0, 8.0, 321)
GRID.flags.writeable = False
#: The target's two modes: (weight, mean, std).  Unequal weights so the reverse fit has one answer.
MODES = ((0.4, -2.5, 0.6), (0.6, 2.0, 0.8))
#: Candidate (μ, σ) of the one-Gaussian model: μ in steps of 0.1, σ in steps of 0.05.
MEANS = np.round(np.arange(-4.0, 4.0 + 1e-9, 0.1), 2)
STDS = np.round(np.arange(0.3, 3.5 + 1e-9, 0.05), 2)


class GaussianFit(NamedTuple):
    direction: str  # "forward" (KL(p ‖ q)) or "reverse" (KL(q ‖ p))
    mean: float
    std: float
    forward_kl: float  # KL(p ‖ q) of the fitted q, nats
    reverse_kl: float  # KL(q ‖ p) of the fitted q, nats


def normal_mass(x, mean, std) -> np.ndarray:
    """N(mean, std²) evaluated on ``x`` [X] and normalised to sum 1 → [X] (array ``mean`` and
    ``std`` broadcast in front of X: one row per candidate)."""
    mean, sigma = np.asarray(mean, dtype=np.float64)[..., None], np.asarray(std, dtype=np.float64)[..., None]
    if not np.all(sigma > 0):
        raise ValueError(f"std must be > 0, got {std!r}")
    density = np.exp(-0.5 * ((np.asarray(x, dtype=np.float64) - mean) / sigma) ** 2)
    return density / density.sum(axis=-1, keepdims=True)


def bimodal_target(x=GRID, modes=MODES) -> np.ndarray:
    """The target p on ``x``: Σ weight·N(mean, std²) over ``modes``, normalised → [X]."""
    weights = [w for w, _, _ in modes]
    if any(w <= 0 for w in weights) or not np.isclose(sum(weights), 1.0):
        raise ValueError(f"mode weights must be > 0 and sum to 1, got {weights}")
    mixture = sum(w * normal_mass(x, m, s) for w, m, s in modes)
    return mixture / mixture.sum()


def _kl_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """KL(a_i ‖ b_i) for each row pair; rows [N, X] (b may broadcast).  Terms with a = 0 are 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(a > 0, a * (np.log(a) - np.log(b)), 0.0)
    return terms.sum(axis=-1)


def fit_gaussian(direction: str, x=GRID, target=None, means=MEANS, stds=STDS) -> GaussianFit:
    """The (μ, σ) on the candidate grid that minimises the chosen direction against ``target``."""
    if direction not in ("forward", "reverse"):
        raise ValueError(f"direction must be 'forward' (KL(p ‖ q)) or 'reverse' (KL(q ‖ p)), got {direction!r}")
    p = bimodal_target(x) if target is None else np.asarray(target, dtype=np.float64)
    means, stds = np.asarray(means, dtype=np.float64), np.asarray(stds, dtype=np.float64)
    q = normal_mass(x, means[:, None], stds[None, :]).reshape(-1, len(x))  # candidates [M·S, X], means outer
    forward = _kl_rows(p[None, :], q)
    reverse = _kl_rows(q, p[None, :])
    best = int(np.argmin(forward if direction == "forward" else reverse))
    mean, std = means[best // len(stds)], stds[best % len(stds)]
    return GaussianFit(direction, float(mean), float(std), float(forward[best]), float(reverse[best]))


def moments(x, mass) -> tuple[float, float]:
    """Mean and standard deviation of a probability vector ``mass`` [X] on points ``x`` [X]."""
    mean = float(np.sum(x * mass))
    return mean, float(np.sqrt(np.sum(mass * (x - mean) ** 2)))
