"""The measuring page's exercise, fed with the stored reference result's two measured series.

    growth_exponent(contexts, times_ms) -> float

The exercise itself (its public properties, its hints) is ``labkit.check.growth_exponent``, and its hidden
reference and curves are the teacher's key; here the page adds the cached and recompute series of a
benchmark result to the key's cases, so the reader's fit is graded on the numbers the page shows too.
Without the key (a class copy) the public properties alone judge it.
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
    """The exercise, graded also on ``result``'s two measured series when the key is loaded."""
    spec, measured = check.exercises()["growth_exponent"], measured_cases(result)
    if spec.cases is None or not measured:
        return replace(spec, wrong_runs=0)
    cases = spec.cases
    return replace(spec, cases=lambda: [*cases(), *measured], wrong_runs=0)
