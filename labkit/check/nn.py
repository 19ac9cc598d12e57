"""Exercise of the preface: RMSNorm, the first kernel the book shows."""

from __future__ import annotations

import numpy as np

from labkit.check.core import CheckResult, as_array, call, compare_arrays, exercise, failure, passed
from labkit.nn.norm import rms_norm as reference_rms_norm


def _cases():
    rng = np.random.default_rng(7)
    yield "one row [1, 4]", np.array([[3.0, 4.0, 0.0, 0.0]]), 1e-6
    yield "a batch [2, 3, 8] (float64)", rng.normal(size=(2, 3, 8)), 1e-6
    yield "a batch [2, 5, 8] (float32)", rng.normal(size=(2, 5, 8)).astype(np.float32), 1e-6
    yield "tiny values, eps = 0.1", rng.normal(scale=1e-4, size=(3, 4)), 0.1


@exercise("rms_norm", page="notebooks/00-preface.md", signature=("x", "eps"))
def rms_norm(candidate) -> CheckResult:
    """normalise the last axis of x to unit root-mean-square: x / sqrt(mean(x**2) + eps), same
    shape and dtype as x"""
    for name, x, eps in _cases():
        got = as_array(call(candidate, x.copy(), eps), "the result", shape=x.shape)
        if got.dtype != x.dtype:
            return failure(
                "the dtype changed",
                where=f"case “{name}”",
                rule="dtype",
                got=str(got.dtype),
                expected=str(x.dtype),
                hint="keep the arithmetic in the input's dtype (a float64 eps constant "
                "or np.float64 scalar can promote float32 arrays)",
            )
        expected = reference_rms_norm(x, eps)
        tolerance = 1e-5 if x.dtype == np.float32 else 1e-12
        result = compare_arrays(
            got,
            expected,
            atol=tolerance,
            where=f"case “{name}” at index ",
            hint="the mean of the squares runs over the last axis only (keep its "
            "dimension so it broadcasts), and eps goes inside the square root",
        )
        if not result.passed:
            return result
    return passed("matches labkit.nn.rms_norm on every case")
