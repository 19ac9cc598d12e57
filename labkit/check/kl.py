"""Exercise of lab 08: KL divergence with its support rules."""

from __future__ import annotations

import math

import numpy as np

from labkit.check._support import ATOL, in_case
from labkit.check.core import CheckResult, call, exercise, failure, number, passed


def _kl_cases() -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    from labkit.labs import kl

    return {
        "the lab's KL(p ‖ q), p = [0.8, 0.2], q = [0.5, 0.5]": (kl.P, kl.Q),
        "the lab's reverse direction KL(q ‖ p)": (kl.Q, kl.P),
        "p against itself": (kl.P, kl.P),
        "a zero in p: p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]": ((0.9, 0.1, 0.0), (0.5, 0.25, 0.25)),
        "the same pair reversed: mass where the reference has none": ((0.5, 0.25, 0.25), (0.9, 0.1, 0.0)),
        "the lab's zero-support pair: [0.5, 0.5] against [1, 0]": (kl.ZERO_SUPPORT_P, kl.ZERO_SUPPORT_Q),
        "equal supports with a shared zero: [0.5, 0, 0.5] against [0.25, 0, 0.75]": (
            (0.5, 0.0, 0.5),
            (0.25, 0.0, 0.75),
        ),
        "disjoint supports: [0.5, 0.5, 0, 0] against [0, 0, 0.5, 0.5]": ((0.5, 0.5, 0.0, 0.0), (0.0, 0.0, 0.5, 0.5)),
    }


def _kl_hint(got: float, expected: float, p: np.ndarray, q: np.ndarray) -> tuple[str, str]:
    from labkit.labs.kl import kl_divergence

    if math.isnan(got):
        return (
            "terms with p_i = 0 contribute 0",
            "0·log(0/q) is NaN in floating point, but its limit is 0: sum only over the outcomes with p_i > 0",
        )
    if math.isinf(expected):
        return (
            "KL(p ‖ q) = +∞ when some q_i = 0 < p_i",
            "p puts mass on an outcome q rules out: log(p_i / 0) = +∞, so the divergence is infinite — "
            "do not drop that term or pad q with a small number",
        )
    if math.isinf(got):
        return (
            "only q_i = 0 < p_i makes KL infinite",
            "an outcome with p_i = 0 contributes nothing, whatever q_i is (even 0)",
        )
    rule = "KL(p ‖ q) = Σ_{i: p_i > 0} p_i·log(p_i / q_i) in nats (within 1e-12)"
    reverse = kl_divergence(q, p)
    if math.isfinite(reverse) and abs(got - reverse) <= ATOL and abs(reverse - expected) > ATOL:
        return (rule, "that is KL(q ‖ p): the weights of KL(p ‖ q) are p's, and the ratio is p_i / q_i")
    if abs(got - expected / math.log(2)) <= ATOL:
        return rule, "that is in bits: nats use the natural logarithm"
    if abs(got - expected) < 1e-6:
        return rule, (
            "very close but not equal: a small constant added to avoid log 0 shifts every term; "
            "skip the p_i = 0 terms instead"
        )
    return rule, "weight each log-ratio log(p_i / q_i) by p_i, over the outcomes p can produce"


@exercise("kl_divergence", page="notebooks/11-labs/08-kl-divergence.md", signature=("p", "q"))
def kl_divergence(candidate) -> CheckResult:
    """return KL(p ‖ q) in nats (a float) for probability vectors p, q [V]: Σ over p_i > 0 of
    p_i·log(p_i / q_i); +inf when some q_i = 0 < p_i"""
    from labkit.labs.kl import kl_divergence as reference_kl

    for case, (p, q) in _kl_cases().items():
        p, q = np.array(p), np.array(q)
        expected = reference_kl(p, q)
        with in_case(case):
            got = number(call(candidate, p.copy(), q.copy()), "KL(p ‖ q)")
        if math.isinf(expected) and got == math.inf:
            continue
        if math.isfinite(expected) and math.isfinite(got) and abs(got - expected) <= ATOL:
            continue
        rule, hint = _kl_hint(got, expected, p, q)
        return failure(
            "the divergence differs", where=f"case “{case}”", rule=rule, got=got, expected=expected, hint=hint
        )
    return passed(
        f"all {len(_kl_cases())} pairs match: 0.19274475702175753 and "
        "0.22314355131420976 nats for the lab's pair, ∞ wherever the reference "
        "rules out what p produces"
    )
