"""Numeric helpers the chapter-11 labs share: log-softmax, masked cross-entropy, finite
differences and ``max_abs_difference`` (softmax is ``labkit.nn.attention.softmax``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from labkit.core.guards import real_array, real_number, real_values


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """log p_i = (z_i − m) − log Σ_j exp(z_j − m),  m = max_j z_j.   Same shape as ``logits``."""
    z = np.asarray(logits)
    centred = z - z.max(axis=axis, keepdims=True)
    log_partition = np.log(np.exp(centred).sum(axis=axis, keepdims=True))
    return centred - log_partition


def masked_cross_entropy(logits: np.ndarray, targets: np.ndarray, valid: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy over the supervised rows and its gradient with respect to ``logits``.

    logits: [N, V] float; targets: [N] integer token IDs; valid: [N] boolean (row supervised).

        L = −(1/M) Σ_{n: valid_n} log softmax(z_n)[y_n],        M = Σ_n valid_n
        ∂L/∂z_n = valid_n · (softmax(z_n) − onehot(y_n)) / M

    Returns (L in nats, gradient [N, V]).  An unsupervised row gets an all-zero gradient.
    """
    z, y, mask = _ce_arguments(logits, targets, valid)
    n_rows, supervised = z.shape[0], int(np.count_nonzero(mask))  # N, M
    rows = np.arange(n_rows)
    log_p = log_softmax(z)  # [N, V]
    target_log_p = log_p[rows, y]  # [N]
    loss = -float(np.mean(target_log_p[mask]))
    residual = np.exp(log_p)  # softmax(z_n), then − onehot(y_n)
    residual[rows, y] -= 1.0
    gradient = residual * (mask[:, None] / supervised)
    return loss, gradient


def _ce_arguments(logits, targets, valid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """logits [N, V] finite floats, targets [N] integer IDs in [0, V), valid [N] booleans, one True at least."""
    z, y, mask = real_array("logits", logits), np.asarray(targets), np.asarray(valid)
    if z.ndim != 2:
        raise ValueError(f"logits must be [N, V], got shape {list(z.shape)}")
    n_rows, vocab = z.shape
    if y.shape != (n_rows,) or y.dtype.kind not in "iu":  # signed or unsigned integers
        raise ValueError(f"targets must be [N] = [{n_rows}] integers, got {y.dtype}{list(y.shape)}")
    if mask.shape != (n_rows,) or mask.dtype != np.bool_:
        raise ValueError(f"valid must be [N] = [{n_rows}] booleans, got {mask.dtype}{list(mask.shape)}")
    out_of_range = y[(y < 0) | (y >= vocab)]
    if out_of_range.size:
        raise ValueError(f"targets must lie in [0, {vocab}), got {int(out_of_range[0])}")
    if not mask.any():
        raise ValueError("valid marks no supervised target: the mean cross-entropy over zero rows is undefined")
    return z, y, mask


def finite_difference(fn: Callable[[np.ndarray], float], x: np.ndarray, step: float = 1e-5) -> np.ndarray:
    """Central differences ∂f/∂x_i ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h for every element of ``x``.

    fn maps an array shaped like ``x`` to a float; returns a float64 array shaped like ``x``.
    """
    step = real_number("step", step, 0, open_low=True, expected="a positive float")
    point = real_values("x", x, finite=True)
    flat = point.reshape(-1)
    nudge = np.zeros_like(flat)  # h·e_i, one element at a time
    slopes = np.empty_like(flat)
    for i in range(flat.size):
        nudge[i] = step
        rise = fn((flat + nudge).reshape(point.shape)) - fn((flat - nudge).reshape(point.shape))
        nudge[i] = 0.0
        slopes[i] = rise / (2 * step)
    return slopes.reshape(point.shape)


def max_abs_difference(a: np.ndarray, b: np.ndarray) -> float:
    """max |a − b| over all elements, as a Python float (shapes must match)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"cannot compare arrays of shapes {list(a.shape)} and {list(b.shape)}")
    return float(np.max(np.abs(a - b)))
