"""Exercise of lab 09: accept probabilities and the residual of speculative sampling."""

from __future__ import annotations

import numpy as np

from labkit.check._support import close, first_bad_index, in_case, non_finite_index
from labkit.check.core import CheckResult, call, exercise, failure, numeric_array, passed, unpack


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


def _swapped_ratio(accept: np.ndarray, p: np.ndarray, q: np.ndarray) -> bool:
    """Does ``accept`` equal min(1, q/p) wherever both are positive (the draft over the target)?"""
    both = (p > 0) & (q > 0)
    return bool(both.any()) and close(accept[both], np.minimum(1.0, q[both] / p[both]))


def _residual_hint(got, p, q, mass) -> str:
    excess = np.clip(p - q, 0.0, None)
    if close(got, p):
        return (
            "that is the target p itself: the accepted draft already supplied min(p, q), so refilling "
            "from p counts that overlap twice (the wrong fallback of this lab)"
        )
    if close(got, excess):
        return "the residual is a distribution: divide max(p − q, 0) by its sum, Σ max(p − q, 0) = β"
    shortfall = np.clip(q - p, 0.0, None)
    if shortfall.sum() > 0 and close(got, shortfall / shortfall.sum()):
        return "the residual is the part of p the draft left uncovered: max(p − q, 0), not max(q − p, 0)"
    gap = np.abs(p - q)
    if gap.sum() > 0 and close(got, gap / gap.sum()):
        return "only tokens where p exceeds q need refilling: max(p − q, 0), not |p − q|"
    return "r(x) = max(p(x) − q(x), 0) / Σ_y max(p(y) − q(y), 0): the mass of p the draft does not cover"


@exercise(
    "speculative_parts",
    page="notebooks/11-labs/09-speculative-sampling.md",
    signature=("p", "q"),
    kind="extend",
    idea=(
        "speculative sampling keeps the target's distribution: the target verifies the draft, and rejected "
        "mass is redistributed where the target wanted more"
    ),
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
        proposed = q > 0
        bad = first_bad_index(np.where(proposed, accept, 0.0), np.where(proposed, mass.accept_probability, 0.0))
        if bad is not None:
            (x,) = bad
            if not np.isfinite(accept[x]) or accept[x] > 1.0:
                rule = "α(x) = min(1, p(x)/q(x)) is a probability in [0, 1]"
                hint = "a token the draft under-proposes (q ≤ p) is always kept: α = min(1, p/q), never more than 1"
            elif _swapped_ratio(accept, p, q):
                rule, hint = (
                    "α(x) = min(1, p(x)/q(x))",
                    "the ratio is target over draft, p(x)/q(x): the target verifies",
                )
            else:
                rule = "α(x) = min(1, p(x)/q(x))"
                hint = (
                    "the draft's x is kept with probability p/q when the draft over-proposes it, and always otherwise"
                )
            return failure(
                "an accept probability differs",
                where=f"case “{case}”, accept[{x}] (p = {p[x]:g}, q = {q[x]:g})",
                rule=rule,
                got=accept[x].item(),
                expected=mass.accept_probability[x].item(),
                hint=hint,
            )
        broken = non_finite_index(residual)
        if broken is not None and mass.reject_probability <= 1e-15:
            return failure(
                "the residual is not finite",
                where=f"case “{case}”, residual{list(broken)}",
                rule="when p = q the residual is all zeros (it is never drawn from)",
                got=residual[broken].item(),
                expected=0.0,
                hint="with p = q nothing is ever rejected and Σ max(p − q, 0) = 0: there is "
                "nothing to normalise, so do not divide by it",
            )
        bad = first_bad_index(residual, mass.residual)
        if bad is not None:
            (x,) = bad
            return failure(
                "the residual differs",
                where=f"case “{case}”, residual[{x}] (p = {p[x]:g}, q = {q[x]:g})",
                rule="r(x) = max(p(x) − q(x), 0) / Σ max(p − q, 0) (within 1e-12)",
                got=residual[x].item(),
                expected=mass.residual[x].item(),
                hint=_residual_hint(residual, p, q, mass),
            )
        output = np.where(proposed, q * accept, 0.0) + mass.reject_probability * residual
        worst = max(worst, float(np.max(np.abs(output - p))))
    return passed(
        f"all {len(_speculative_cases())} pairs match; with your α and r the output "
        f"law q·α + β·r equals p everywhere (largest gap {worst:.1e})"
    )
