"""What the chapter-11 labs share: their checks, raising ``LabCheckFailed``, and numeric helpers."""

from collections.abc import Callable

import numpy as np

from labkit.core.guards import is_integer, real_array, real_number, real_values
from labkit.labs import samples_out_of_range


class LabCheckFailed(AssertionError):
    """A lab's own check did not hold: the mechanism (or labkit) is broken, not the input."""


def require(condition: bool, message: str) -> None:
    """Raise ``LabCheckFailed(message)`` unless ``condition`` holds (unlike ``assert``, never skipped)."""
    if not condition:
        raise LabCheckFailed(message)


def require_close(what: str, actual, expected, atol: float = 0.0, rtol: float = 0.0) -> None:
    """Element-wise |actual − expected| ≤ atol + rtol·|expected| (one shape), else name the first bad element."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise LabCheckFailed(f"{what}: shapes differ, {list(a.shape)} vs {list(e.shape)}")
    allowed = atol + rtol * np.abs(e)
    gap = np.abs(a - e)
    bad = ~(gap <= allowed)  # NaN counts as bad
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f"[{', '.join(map(str, index))}]" if index else ""
        raise LabCheckFailed(
            f"{what}: element {where or 'value'} is {float(a[index])!r}, expected {float(e[index])!r}, "
            f"off by {gap[index]:.3e} (allowed {allowed[index]:.3e}; {int(bad.sum())} of {bad.size} elements off)"
        )


def check_samples(samples: int) -> int:
    """The Monte Carlo sample count the speculative lab's six-sigma check can stand on."""
    if not is_integer(samples):
        raise ValueError(f"samples must be an integer, got {samples!r}")
    if problem := samples_out_of_range(int(samples)):
        raise ValueError(f"samples {problem}")
    return int(samples)


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """log p_i = (z_i − m) − log Σ_j exp(z_j − m),  m = max_j z_j.   Same shape as ``logits``."""
    z = np.asarray(logits)
    centred = z - z.max(axis=axis, keepdims=True)
    log_partition = np.log(np.exp(centred).sum(axis=axis, keepdims=True))
    return centred - log_partition


def masked_cross_entropy(logits: np.ndarray, targets: np.ndarray, valid: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy over the supervised rows, in nats, and its gradient [N, V].

    logits: [N, V] float; targets: [N] integer token IDs; valid: [N] boolean (row supervised).

        L = −(1/M) Σ_{n: valid_n} log softmax(z_n)[y_n],        M = Σ_n valid_n
        ∂L/∂z_n = valid_n · (softmax(z_n) − onehot(y_n)) / M     (0 on an unsupervised row)
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
    """Central differences ∂f/∂x_i ≈ (f(x + h·e_i) − f(x − h·e_i)) / 2h, h = ``step``: float64, shaped like ``x``."""
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
