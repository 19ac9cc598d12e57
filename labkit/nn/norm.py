"""RMSNorm without a learned gain: x / √(mean(x²) + eps) over the last axis."""

import numpy as np


def rms_norm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Normalise the last axis of ``x`` ([..., d]) to unit root-mean-square.

    Returns an array of the same shape and dtype.
    """
    # mean(x²) exactly as np.mean computes it (pairwise sum, then ÷ d as an intp, in place),
    # without its Python-level dispatch
    mean_square = np.add.reduce(x * x, axis=-1, keepdims=True)
    np.true_divide(mean_square, np.intp(x.shape[-1]), out=mean_square, casting="unsafe")
    return x / np.sqrt(mean_square + np.asarray(eps, dtype=x.dtype))
