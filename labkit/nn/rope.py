"""Rotary position embedding, pairwise form: dimensions (0,1), (2,3), … rotate together."""

import numpy as np

from labkit.core.guards import is_integer, real_array, real_number


def rope_angles(
    positions: np.ndarray, head_dim: int, base: float = 10000.0, dtype=np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the rotation angles, each [T, d_h/2]:
    angle[t, i] = positions[t] · base^(−2i/d_h).  Compute once, rotate many heads/layers."""
    positions = np.asarray(positions)
    if positions.dtype.kind not in "uif" or (positions.dtype.kind == "f" and not np.isfinite(positions).all()):
        raise ValueError(f"positions must be finite real numbers, got dtype {positions.dtype}")
    if not is_integer(head_dim) or head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be an even integer >= 2, got {head_dim!r}")
    base = real_number("base", base, 1.0, open_low=True)
    inverse_frequency = base ** (-np.arange(0, head_dim, 2) / head_dim)  # [d_h/2]
    angle = positions[:, None] * inverse_frequency[None, :]  # [T, d_h/2]
    return np.cos(angle).astype(dtype, copy=False), np.sin(angle).astype(dtype, copy=False)


def rope(
    x: np.ndarray,
    positions: np.ndarray,
    base: float = 10000.0,
    angles: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    checked: bool = False,
) -> np.ndarray:
    """Rotate ``x`` ([..., T, d_h], d_h even) by the angles of ``positions`` ([T]).

    Pair i of a head turns by angle = position · base^(−2i/d_h):
        out[2i]   = x[2i]·cos − x[2i+1]·sin
        out[2i+1] = x[2i]·sin + x[2i+1]·cos
    ``angles``: ``rope_angles(positions, d_h, base, x.dtype)`` when the caller has them already.
    The result has the shape and dtype of ``x`` (a real float array: an integer one would
    round every rotated value to an integer).  ``checked``: the caller has checked ``x`` and the
    angles of ``positions`` already (the decoder does, once a pass).
    """
    if checked:
        cos, sin = angles
    else:
        x, (cos, sin) = _rope_arguments(x, positions, base, angles)
    first, second = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = first * cos - second * sin
    out[..., 1::2] = first * sin + second * cos
    return out


def _rope_arguments(x, positions, base, angles) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """x: a finite real [..., T, d_h] array, d_h even; positions [T]; angles [T, d_h/2] each (None: computed)."""
    x = real_array("x", x)
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"rope needs an even head size, got d_h={head_dim}")
    positions = np.asarray(positions)
    if positions.ndim != 1 or positions.shape[0] != x.shape[-2]:
        raise ValueError(f"positions must be [T] with T={x.shape[-2]}, got shape {list(positions.shape)}")
    cos, sin = rope_angles(positions, head_dim, base, x.dtype) if angles is None else angles
    if cos.shape != (positions.shape[0], head_dim // 2):
        raise ValueError(f"angles must be [T, d_h/2] = [{positions.shape[0]}, {head_dim // 2}], got {list(cos.shape)}")
    return x, (cos, sin)
