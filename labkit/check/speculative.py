"""Exercise of lab 09: accept probabilities and the residual of speculative sampling."""

from __future__ import annotations

import numpy as np

from labkit.check._support import in_case
from labkit.check.core import CheckResult, call, compare_arrays, exercise, numeric_array, passed, unpack


def _speculative_cases() -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    from labkit.labs import speculative

    (_, equal_p, equal_q), (_, disjoint_p, disjoint_q) = speculative.EDGE_CASES
    return {
        "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]": (speculative.TARGET, speculative.DRAFT),
        "draft equal to target": (equal_p, equal_q),
        "disjoint support: p = [0, 0.7, 0.3], q = [0.3, 0.7, 0]": (disjoint_p, disjoint_q),
        "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]": ((0.5, 0.5, 0.0), (0.2, 0.3, 0.5)),
        "six tokens, zeros on both sides": ((0.3, 0.25, 0.0, 0.2, 0.15, 0.1), (0.1, 0.25, 0.3, 0.35, 0.0, 0.0)),
    }


@exercise(
    "speculative_parts",
    page="notebooks/11-labs/09-speculative-sampling.md",
    signature=("p", "q"),
    kind="extend",
    idea=(
        "speculative sampling keeps the target's distribution: the target verifies the draft, and rejected "
        "mass is redistributed where the target wanted more"
    ),
    rule="the target verifies the draft, so the ratio is target over draft, and a probability never exceeds 1; "
    "the residual is a distribution over where the target wanted more — and when nothing is rejected, there is "
    "nothing to normalise",
)
def speculative_parts(candidate) -> CheckResult:
    """return (accept [V], residual [V]) for target p and draft q [V]: accept = min(1, p/q) (where
    q = 0 it is never used and not checked), residual = max(p − q, 0) / Σ max(p − q, 0), all
    zeros when p = q"""
    from labkit.labs.speculative import speculative_mass

    worst = 0.0
    for case, (p, q) in _speculative_cases().items():
        p, q = np.array(p), np.array(q)
        mass = speculative_mass(p, q)
        with in_case(case):
            accept, residual = unpack(call(candidate, p.copy(), q.copy()), ("accept", "residual"))
            accept = numeric_array(accept, "accept", p.shape)
            residual = numeric_array(residual, "residual", p.shape)
        proposed = q > 0  # α where the draft never proposes is never used
        accept = np.where(proposed, accept, 0.0)
        for what, got, expected in (
            ("accept", accept, np.where(proposed, mass.accept_probability, 0.0)),
            ("residual", residual, mass.residual),
        ):
            verdict = compare_arrays(got, expected, atol=1e-12, where=f"case “{case}”, {what}", hint=None)
            if not verdict.passed:
                return verdict
        output = np.where(proposed, q * accept, 0.0) + mass.reject_probability * residual
        worst = max(worst, float(np.max(np.abs(output - p))))
    return passed(
        f"all {len(_speculative_cases())} pairs match; with your α and r the output "
        f"law q·α + β·r equals p everywhere (largest gap {worst:.1e})"
    )
