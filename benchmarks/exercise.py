"""The page's check-yourself exercise: fit the growth exponent of a timing curve.

    growth_exponent(contexts, times_ms) -> float

k in t ≈ c·T^k, by least squares on (log T, log t). The checker runs the reader's function on
exact power laws (k = 0, 1, 2, with a constant factor), on a noisy curve, and on the two
measured series of the stored reference result, and compares with ``benchmarks.fit.power_fit``.

It is an ``ExerciseSpec`` of ``labkit.check`` but deliberately not registered in
``labkit.check.registry`` (the book's registry holds labkit's exercises, each with a solution
in ``solutions/``); see benchmarks/README.md.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.fit import power_fit
from labkit.check.core import CandidateProblem, CheckResult, ExerciseSpec, call

NAME = "growth_exponent"
PAGE = "notebooks/11-labs/13-measuring-the-book.md"
TOLERANCE = 1e-6


def _cases(result: dict | None) -> list[tuple[str, list[int], list[float]]]:
    contexts = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = np.array(contexts, dtype=float)
    wobble = 1.0 + 0.1 * np.sin(np.arange(len(contexts)))          # deterministic "noise"
    cases = [("a flat curve t = 0.2 ms", contexts, [0.2] * len(contexts)),
             ("a linear curve t = 0.003·T", contexts, list(0.003 * t)),
             ("a quadratic curve t = 5e-5·T²", contexts, list(5e-5 * t**2)),
             ("a noisy T^1.5 curve", contexts, list(1e-3 * t**1.5 * wobble))]
    if result is not None and result["scaling"]["available"]:
        s = result["scaling"]
        cases.append(("the reference's cached series", s["contexts"], [x["median"] for x in s["cached_ms"]]))
        cases.append(("the reference's recompute series", s["contexts"], [x["median"] for x in s["recompute_ms"]]))
    return cases


def _hint(got: float, contexts, times) -> str:
    x, y = np.log(np.asarray(contexts, float)), np.log(np.asarray(times, float))
    raw = np.polyfit(np.asarray(contexts, float), np.asarray(times, float), 1)
    if math.isclose(got, float(raw[0]), rel_tol=1e-6, abs_tol=1e-12):
        return ("that is the slope in milliseconds per token; the exponent is the slope after "
                "taking the logarithm of both T and t")
    if math.isclose(got, float(np.polyfit(x, y, 1)[1]), rel_tol=1e-6):
        return "that is the fitted line's intercept (log c); k is its slope"
    if math.isclose(got, float(np.polyfit(np.log2(contexts), y, 1)[0]), rel_tol=1e-6):
        return "take the same logarithm of T and of t (the base must match for k to come out right)"
    return "k is the slope of the least-squares line through the points (log T, log t)"


def _check(candidate, result: dict | None = None) -> CheckResult:
    for label, contexts, times in _cases(result):
        got = call(candidate, list(contexts), list(times))
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise CandidateProblem(f"growth_exponent must return a number, got {type(got).__name__}") from None
        expected = power_fit(contexts, times)["exponent"]
        if not (math.isfinite(value) and abs(value - expected) <= TOLERANCE):
            return CheckResult(NAME, False, f"wrong exponent for {label}", where=label,
                               rule=f"|k − k_ref| ≤ {TOLERANCE:g}", got=value, expected=expected,
                               hint=_hint(value, contexts, times))
    return CheckResult(NAME, True, "matches the reference fit on every curve, measured ones included")


def make_exercise(result: dict | None = None) -> ExerciseSpec:
    """The exercise, checking also against ``result``'s two measured series (when given)."""
    return ExerciseSpec(NAME, PAGE, ("contexts", "times_ms"),
                        "return k in t ≈ c·T^k, fitted by least squares on (log T, log t)",
                        lambda candidate: _check(candidate, result))
