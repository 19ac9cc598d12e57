"""RMSNorm without a learned gain: x / √(mean(x²) + eps) over the last axis."""

import numpy as np

from labkit.core.guards import real_array, real_number


def rms_norm(x: np.ndarray, eps: float = 1e-6, *, checked: bool = False) -> np.ndarray:
    """Normalise the last axis of ``x`` ([..., d]) to unit root-mean-square.

    Returns an array of the same shape and dtype (float32 or float64, finite; eps > 0).
    ``checked``: the caller has checked ``x`` and ``eps`` already (the decoder does).
    """
    if not checked:  # float16 is refused: x² overflows it from |x| = 256 and the norm turns to zeros
        x, eps = real_array("x", x, min_bits=32), real_number("eps", eps, 0.0, open_low=True)
    with np.errstate(over="ignore"):  # a row whose x² overflows is mended below
        mean_square = (x * x).sum(axis=-1, keepdims=True) / x.shape[-1]  # mean of x² over d
    normed = x / np.sqrt(mean_square + np.asarray(eps, dtype=x.dtype))  # x / √(mean(x²) + eps)
    return normed if np.isfinite(mean_square).all() else _huge_rows(x, normed, mean_square)


def _huge_rows(x: np.ndarray, normed: np.ndarray, mean_square: np.ndarray) -> np.ndarray:
    """``normed`` with each row whose x² overflowed the dtype (float32 past |x| ≈ 1.8e19) normalised
    after scaling it by its largest |x|: then |y| ≤ 1, and eps is far below the rounding."""
    with np.errstate(invalid="ignore", divide="ignore"):
        y = x / np.abs(x).max(axis=-1, keepdims=True)
        scaled = y / np.sqrt((y * y).sum(axis=-1, keepdims=True) / x.shape[-1])
    return np.where(np.isfinite(mean_square), normed, scaled)
