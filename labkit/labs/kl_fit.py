"""Fitting one Gaussian to a two-mode target: forward KL covers the mass, reverse KL picks a mode.

Target p is a mixture of two normals on a grid; the model q is one normal N(μ, σ²).  The two
fits minimise, over a grid of (μ, σ), the two directions (named by the roles, target first):

    forward  KL(p ‖ q) = Σ p·log(p/q)    weighted by the target: q must cover every place p
                                          has mass → mass-covering (moment matching: μ, σ of p)
    reverse  KL(q ‖ p) = Σ q·log(q/p)    weighted by the model: q is punished wherever p is
                                          thin → mode-seeking (q sits on one mode)

Densities are evaluated on ``GRID`` and normalised to probability vectors [X], so the two KLs
are the discrete ones of ``labkit.labs.kl``.  No optimiser: an exhaustive search over
``MEANS`` × ``STDS`` returns grid values, which print the same on every machine.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Support of the densities: [X] = 321 points on [−8, 8], spacing 0.05.
GRID = np.linspace(-8.0, 8.0, 321)
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


def normal_mass(x, mean: float, std: float) -> np.ndarray:
    """N(mean, std²) evaluated on ``x`` [X] and normalised to sum 1 → [X]."""
    if not std > 0:
        raise ValueError(f"std must be > 0, got {std!r}")
    density = np.exp(-0.5 * ((np.asarray(x, dtype=np.float64) - mean) / std) ** 2)
    return density / density.sum()


def bimodal_target(x=GRID, modes=MODES) -> np.ndarray:
    """The target p on ``x``: Σ weight·N(mean, std²) over ``modes``, normalised → [X]."""
    weights = [w for w, _, _ in modes]
    if any(w <= 0 for w in weights) or not np.isclose(sum(weights), 1.0):
        raise ValueError(f"mode weights must be > 0 and sum to 1, got {weights}")
    mixture = sum(w * normal_mass(x, m, s) for w, m, s in modes)
    return mixture / mixture.sum()


def _candidates(x, means, stds) -> np.ndarray:
    """Every candidate q as rows: [len(means)·len(stds), X], means outer, stds inner."""
    z = (np.asarray(x)[None, None, :] - means[:, None, None]) / stds[None, :, None]
    density = np.exp(-0.5 * z**2).reshape(len(means) * len(stds), -1)
    return density / density.sum(axis=1, keepdims=True)


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
    q = _candidates(x, means, stds)
    forward = _kl_rows(p[None, :], q)
    reverse = _kl_rows(q, p[None, :])
    best = int(np.argmin(forward if direction == "forward" else reverse))
    mean, std = means[best // len(stds)], stds[best % len(stds)]
    return GaussianFit(direction, float(mean), float(std), float(forward[best]), float(reverse[best]))


def moments(x, mass) -> tuple[float, float]:
    """Mean and standard deviation of a probability vector ``mass`` [X] on points ``x`` [X]."""
    mean = float(np.sum(x * mass))
    return mean, float(np.sqrt(np.sum(mass * (x - mean) ** 2)))
