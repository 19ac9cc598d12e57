"""Rotary position embedding, pairwise form: dimensions (0,1), (2,3), … rotate together."""

import numpy as np


def rope(x: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """Rotate ``x`` ([..., T, d_h], d_h even) by the angles of ``positions`` ([T]).

    Pair i of a head turns by angle = position · base^(−2i/d_h):
        out[2i]   = x[2i]·cos − x[2i+1]·sin
        out[2i+1] = x[2i]·sin + x[2i+1]·cos
    The result has the shape and dtype of ``x``.
    """
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"rope needs an even head size, got d_h={head_dim}")
    positions = np.asarray(positions)
    if positions.ndim != 1 or positions.shape[0] != x.shape[-2]:
        raise ValueError(
            f"positions must be [T] with T={x.shape[-2]}, got shape {list(positions.shape)}"
        )
    inverse_frequency = base ** (-np.arange(0, head_dim, 2) / head_dim)      # [d_h/2]
    angle = positions[:, None] * inverse_frequency[None, :]                # [T, d_h/2]
    cos = np.cos(angle).astype(x.dtype)
    sin = np.sin(angle).astype(x.dtype)
    first, second = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = first * cos - second * sin
    out[..., 1::2] = first * sin + second * cos
    return out
