"""Numeric helpers the chapter-11 labs share: (log-)softmax, masked cross-entropy, finite differences.

Names kept stable for every lab: ``softmax``, ``log_softmax``, ``masked_cross_entropy``,
``finite_difference`` and ``max_abs_difference``; ``agreement_rows`` gives the rows of the
notebooks' "source says / labkit computes" tables (``labkit.reader.tables.versus_source``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from labkit.core.guards import holds_float, real_array, real_number, real_values
from labkit.nn.attention import softmax

__all__ = [
    "finite_difference",
    "log_softmax",
    "masked_cross_entropy",
    "agreement_rows",
    "max_abs_difference",
    "softmax",
]


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


#: Relative tolerance for a float the chapter's script computed when it was run once: the
#: labs' own ``rtol`` (a different BLAS kernel moves a float64 result by a few ulps).
SCRIPT_RUN_RTOL = 1e-12


def agreement_rows(rows) -> list[tuple]:
    """The rows of a "source / labkit computes" table with their verdicts, under the book's
    number policy (``labkit.reader.tables.versus_source`` shows them).

    rows: (quantity, reference value, computed value, tolerance) tuples.  The reference is
    typed from the chapter; the computed value must come from a lab's ``run()``.  Returns
    (quantity, reference, computed, tolerance, verdict) tuples.

    Integers, booleans, strings and their lists must be equal ("exact").  Floats agree when
    every number is within ``tolerance`` (absolute) plus ``SCRIPT_RUN_RTOL`` relative — the
    verdict never depends on the last bits.
    """
    out = []
    for quantity, source, computed, tolerance in rows:
        if not holds_float(source) and not holds_float(computed):
            out.append((quantity, source, computed, tolerance, "exact" if source == computed else "DIFFERENT"))
            continue
        try:
            ref = np.asarray(source, dtype=float)
            got = np.asarray(computed, dtype=float)
            with np.errstate(invalid="ignore"):  # inf − inf: equal infinities agree
                near = np.abs(got - ref) <= tolerance + SCRIPT_RUN_RTOL * np.abs(ref)
                close = (got == ref) | (np.isfinite(ref) & near)
            agree = ref.shape == got.shape and bool(np.all(close))
        except (TypeError, ValueError):
            agree = False
        verdict = (
            (f"within {tolerance:g}" if tolerance > 0 else f"within {SCRIPT_RUN_RTOL:g} rel.") if agree else "DIFFERENT"
        )
        out.append((quantity, source, computed, tolerance, verdict))
    return out
