"""Scaled dot-product attention over an explicit allowed-key mask."""

import numpy as np

from labkit.core.guards import real_array


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically shifted softmax; -inf entries get exactly zero weight."""
    x = np.asarray(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=axis, keepdims=True)


def causal_allowed(query_positions: np.ndarray, key_positions: np.ndarray) -> np.ndarray:
    """allowed[i, j] = key j is not in the future of query i.  Shapes [Tq], [Tk] → [Tq, Tk]."""
    return np.asarray(key_positions)[None, :] <= np.asarray(query_positions)[:, None]


def attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray, *, checked: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Attend ``q`` to ``k``/``v`` where ``allowed`` is true.

    q: [..., H, Tq, d_h]; k, v: [..., H, Tk, d_h]; allowed: [Tq, Tk] boolean.
    Returns (output [..., H, Tq, d_h], weights [..., H, Tq, Tk]).

        score = q·kᵀ / √d_h,   score[¬allowed] = −∞,   weights = softmax(score)

    ``checked``: the caller has checked the arguments already (the decoder does, once a pass).
    """
    if not checked:
        q, k, v = _query_key_value(q, k, v)
        allowed = _allowed_mask(allowed, q.shape[-2], k.shape[-2])  # [Tq, Tk]
    scale = np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype))  # √d_h
    score = (q @ np.swapaxes(k, -1, -2)) / scale  # [..., H, Tq, Tk]
    score = np.where(allowed, score, -np.inf)
    weights = softmax(score, axis=-1)
    return weights @ v, weights


def _query_key_value(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite float32/float64 arrays of at least [T, d_h] with one d_h (float16 scores overflow)."""
    q, k, v = (real_array(name, a, min_bits=32) for name, a in (("q", q), ("k", k), ("v", v)))
    if min(q.ndim, k.ndim, v.ndim) < 2 or q.shape[-1] != k.shape[-1] or k.shape[:-1] != v.shape[:-1]:
        raise ValueError(
            f"q, k, v must be [..., T, d_h] with one d_h and k, v of one length, got {q.shape}, {k.shape}, {v.shape}"
        )
    return q, k, v


def _allowed_mask(allowed, tq: int, tk: int) -> np.ndarray:
    """``allowed`` as a boolean [Tq, Tk] in which every query row allows at least one key."""
    allowed = np.asarray(allowed, dtype=bool)
    if allowed.shape != (tq, tk):
        raise ValueError(f"allowed must be [Tq, Tk] = [{tq}, {tk}], got {list(allowed.shape)}")
    empty_rows = np.flatnonzero(~allowed.any(axis=-1))
    if empty_rows.size:
        raise ValueError(f"every query row needs at least one allowed key; row {int(empty_rows[0])} has none")
    return allowed
