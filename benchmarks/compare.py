"""Comparing two JSON reports number by number, with a tolerance for rounding noise.

Keys must match (as sets) and every non-float value must be equal; floats must satisfy
|a − b| ≤ atol + rtol·|b|. Each difference is one readable line naming the key path,
both values and the gap, so "the baseline does the same work" is a checked claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

#: Keys that legitimately differ between two runs of the same work (clock and machine).
VOLATILE = ("timestamp_shanghai", "elapsed_seconds", "runtime")


def report_gaps(
    actual, expected, *, rtol: float = 1e-9, atol: float = 1e-9, path: str = "report", skip: tuple[str, ...] = VOLATILE
) -> list[str]:
    """Every place where ``actual`` and ``expected`` (JSON-like values) differ; [] when they agree."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{path}: expected an object, got {type(actual).__name__}"]
        keys_a = {k for k in actual if k not in skip}
        keys_e = {k for k in expected if k not in skip}
        gaps = []
        if keys_a != keys_e:
            gaps.append(
                f"{path}: keys only in actual {sorted(keys_a - keys_e)}, only in expected {sorted(keys_e - keys_a)}"
            )
        for key in sorted(keys_a & keys_e):
            gaps += report_gaps(actual[key], expected[key], rtol=rtol, atol=atol, path=f"{path}.{key}", skip=skip)
        return gaps
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected a list of {len(expected)}, got {actual!r}"]
        gaps = []
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            gaps += report_gaps(a, e, rtol=rtol, atol=atol, path=f"{path}[{i}]", skip=skip)
        return gaps
    if isinstance(expected, float) and isinstance(actual, int | float) and not isinstance(actual, bool):
        return _number_gaps(actual, expected, rtol=rtol, atol=atol, path=path)
    if type(actual) is not type(expected) or actual != expected:
        return [f"{path}: {actual!r} vs expected {expected!r}"]
    return []


def _number_gaps(actual: float, expected: float, *, rtol: float, atol: float, path: str) -> list[str]:
    """[] when |actual − expected| ≤ atol + rtol·|expected| (NaN equals NaN, ±∞ only itself)."""
    if math.isnan(expected) and math.isnan(actual):
        return []
    if math.isinf(expected) or math.isinf(actual):
        return [] if actual == expected else [f"{path}: {actual!r} vs expected {expected!r}"]
    gap = abs(actual - expected)
    allowed = atol + rtol * abs(expected)
    if gap > allowed:
        return [f"{path}: {actual!r} vs expected {expected!r} (off by {gap:.3e}, allowed {allowed:.1e})"]
    return []
