"""The measuring page's exercise: fit the growth exponent of a timing curve.

    growth_exponent(contexts, times_ms) -> float

k in t ≈ c·T^k, by least squares on (log T, log t). The registered exercise runs the reader's
function on exact power laws (k = 0, 1, 2, with a constant factor) and on a noisy curve; the
page adds the two series it measured (``check_growth_exponent(candidate, extra_cases)``).
"""

from __future__ import annotations

import math

import numpy as np

from labkit.check.core import CandidateProblem, CheckResult, call, exercise

NAME = "growth_exponent"
PAGE = "notebooks/11-labs/13-measuring-the-book.md"
TASK = "return k in t ≈ c·T^k, fitted by least squares on (log T, log t)"
TOLERANCE = 1e-6

#: one curve: (label, context lengths T, times t in ms)
Case = tuple[str, list[int], list[float]]


def synthetic_cases() -> list[Case]:
    """Exact power laws k = 0, 1, 2 and a deterministically wobbled T^1.5."""
    contexts = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = np.array(contexts, dtype=float)
    wobble = 1.0 + 0.1 * np.sin(np.arange(len(contexts)))  # deterministic "noise"
    return [
        ("a flat curve t = 0.2 ms", contexts, [0.2] * len(contexts)),
        ("a linear curve t = 0.003·T", contexts, list(0.003 * t)),
        ("a quadratic curve t = 5e-5·T²", contexts, list(5e-5 * t**2)),
        ("a noisy T^1.5 curve", contexts, list(1e-3 * t**1.5 * wobble)),
    ]


def reference_exponent(contexts, times) -> float:
    """The slope of the least-squares line through (log T, log t)."""
    x, y = np.log(np.asarray(contexts, float)), np.log(np.asarray(times, float))
    design = np.stack([np.ones_like(x), x], axis=1)  # [n, 2]: intercept, slope
    (_, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(slope)


def check_growth_exponent(candidate, extra_cases: list[Case] = ()) -> CheckResult:
    """Run ``candidate`` on the synthetic curves, then on ``extra_cases``; the first miss is reported."""
    for label, contexts, times in [*synthetic_cases(), *extra_cases]:
        got = call(candidate, list(contexts), list(times))
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise CandidateProblem(f"growth_exponent must return a number, got {type(got).__name__}") from None
        expected = reference_exponent(contexts, times)
        if not (math.isfinite(value) and abs(value - expected) <= TOLERANCE):
            return CheckResult(
                NAME,
                False,
                f"wrong exponent for {label}",
                where=label,
                rule=f"|k − k_ref| ≤ {TOLERANCE:g}",
                got=value,
                expected=expected,
            )
    measured = " and on the measured ones" if extra_cases else ""
    return CheckResult(NAME, True, f"matches the reference fit on every synthetic curve{measured}")


@exercise(
    NAME,
    page=PAGE,
    signature=("contexts", "times_ms"),
    task=TASK,
    kind="extend",
    idea="a power law is a straight line once both axes are logarithmic",
    rule="the exponent is a slope after taking the same logarithm of both axes — not the slope in ms per "
    "token, and not the intercept",
)
def growth_exponent(candidate) -> CheckResult:
    return check_growth_exponent(candidate)
