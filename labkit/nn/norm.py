"""RMSNorm without a learned gain: x / √(mean(x²) + eps) over the last axis."""

import numpy as np


def rms_norm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Normalise the last axis of ``x`` ([..., d]) to unit root-mean-square.

    Returns an array of the same shape and dtype.
    """
    mean_square = np.mean(x * x, axis=-1, keepdims=True)
    return x / np.sqrt(mean_square + np.asarray(eps, dtype=x.dtype))
