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
    mean_square = (x * x).sum(axis=-1, keepdims=True) / x.shape[-1]  # mean of x² over d
    return x / np.sqrt(mean_square + np.asarray(eps, dtype=x.dtype))
