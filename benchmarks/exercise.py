"""The measuring page's exercise, fed with the stored reference result's two measured series.

    growth_exponent(contexts, times_ms) -> float

The exercise itself (synthetic curves, reference fit, hints) is ``labkit.check.growth_exponent``;
here the page adds the cached and recompute series of a benchmark result to its cases, so the
reader's fit is checked on the numbers the page shows too.
"""

from __future__ import annotations

from dataclasses import replace

import labkit.check as check
from labkit.check.core import Exercise


def measured_cases(result: dict | None) -> list[tuple[str, tuple[list[int], list[float]]]]:
    """The cached and recompute series of ``result`` as cases (none when it has no scaling run)."""
    if result is None or not result["scaling"]["available"]:
        return []
    s = result["scaling"]
    return [
        ("the reference's cached series", (s["contexts"], [x["median"] for x in s["cached_ms"]])),
        ("the reference's recompute series", (s["contexts"], [x["median"] for x in s["recompute_ms"]])),
    ]


def make_exercise(result: dict | None = None) -> Exercise:
    """The exercise, checking also against ``result``'s two measured series (when given)."""
    spec, measured = check.exercises()["growth_exponent"], measured_cases(result)
    return replace(spec, cases=lambda: [*spec.cases(), *measured], wrong_runs=0)
