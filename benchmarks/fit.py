"""Fitting how a per-token time grows with the context length T.

Two fits of the same points (T_i, y_i):

    linear:     y ≈ a + b·T                 (least squares; b is seconds per extra token)
    power law:  y ≈ c·T^k, i.e. log y ≈ log c + k·log T   (k is the growth exponent)

A KV-cached decode step should be *flat-ish* (k well below 1: the fixed cost of one token's
projections dominates; only the attention over T cached keys grows), and a full recompute
*linear or worse* (k ≈ 1 while the per-position work dominates, → 2 once the T×T scores do).
"""

from __future__ import annotations

import numpy as np

#: growth exponent k below which a curve counts as flat-ish, and above which as linear-or-worse
FLAT_BELOW = 0.5
LINEAR_ABOVE = 0.8


def _points(x, y) -> tuple[np.ndarray, np.ndarray]:
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(f"x and y must be 1-D of one length, got shapes {list(xs.shape)} and {list(ys.shape)}")
    if xs.size < 2:
        raise ValueError(f"a fit needs at least 2 points, got {xs.size}")
    if np.unique(xs).size < 2:
        raise ValueError("x must hold at least two distinct values")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError("x and y must be finite")
    return xs, ys


def linear_fit(x, y) -> dict:
    """Least-squares y ≈ a + b·x over 1-D x, y: {"intercept": a, "slope": b, "r2": R²}."""
    xs, ys = _points(x, y)
    design = np.stack([np.ones_like(xs), xs], axis=1)  # [n, 2]
    (a, b), *_ = np.linalg.lstsq(design, ys, rcond=None)
    residual = ys - (a + b * xs)
    spread = float(np.sum((ys - ys.mean()) ** 2))
    r2 = 1.0 - float(np.sum(residual**2)) / spread if spread > 0 else 1.0
    return {"intercept": float(a), "slope": float(b), "r2": r2}


def power_fit(x, y) -> dict:
    """Least squares of log y on log x: y ≈ c·x^k → {"coefficient": c, "exponent": k, "r2": R²}.

    x and y must be positive (they are lengths and times).
    """
    xs, ys = _points(x, y)
    if np.any(xs <= 0) or np.any(ys <= 0):
        raise ValueError("power_fit needs positive x and y (a context length and a time)")
    line = linear_fit(np.log(xs), np.log(ys))
    return {"coefficient": float(np.exp(line["intercept"])), "exponent": line["slope"], "r2": line["r2"]}


def growth_label(exponent: float) -> str:
    """ "flat-ish" (k < 0.5), "linear or worse" (k > 0.8), otherwise "sub-linear"."""
    if exponent < FLAT_BELOW:
        return "flat-ish"
    if exponent > LINEAR_ABOVE:
        return "linear or worse"
    return "sub-linear"


def describe_growth(x, y) -> dict:
    """Both fits of (x, y) and the label of the power-law exponent."""
    power = power_fit(x, y)
    return {"linear": linear_fit(x, y), "power": power, "growth": growth_label(power["exponent"])}
