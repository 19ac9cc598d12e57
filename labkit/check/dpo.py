"""Exercise of lab 06: the DPO gradient."""

from __future__ import annotations

import math

import numpy as np

from labkit.check._support import close, failure_at, first_bad_index, in_case, not_finite
from labkit.check.core import CheckResult, call, exercise, numeric_array, passed


def _dpo_cases() -> dict[str, tuple[tuple[float, float], tuple[float, float], float]]:
    from labkit.labs import dpo

    lowered = tuple(float(a + b) for a, b in zip(dpo.POLICY_LOG_PROBS, dpo.BOTH_LOWER_SHIFT, strict=True))
    return {
        "the lab's pair (policy [−2, −3], reference [−2.5, −2.5], β = 0.2)": (
            dpo.POLICY_LOG_PROBS,
            dpo.REFERENCE_LOG_PROBS,
            dpo.BETA,
        ),
        "the counterexample: both answers lowered (policy [−3, −5])": (lowered, dpo.REFERENCE_LOG_PROBS, dpo.BETA),
        "a reference that prefers the rejected answer (reference [−3, −0.5], β = 0.5)": (
            (-1.0, -1.5),
            (-3.0, -0.5),
            0.5,
        ),
        "equal log-ratios, m = 0 (β = 0.3)": ((-1.0, -2.0), (-1.0, -2.0), 0.3),
        "a pair ranked overwhelmingly wrong, m ≈ −900 (β = 1)": ((-900.0, -0.5), (-1.0, -1.0), 1.0),
    }


def _dpo_hint(got, policy, reference, beta, expected) -> str:
    from labkit.labs.dpo import dpo_gradient, dpo_margin

    margin = dpo_margin(policy, reference, beta)
    sig_plus = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0  # σ(m)
    if close(got, -expected):
        return (
            "the sign is flipped: raising the chosen answer's log-probability raises m and lowers L, "
            "so ∂L/∂log π_θ(y_w) is negative"
        )
    if close(got, expected / beta):
        return "the chain rule through m = β·Δ brings a factor β: ∂L/∂log π = dL/dm · ∂m/∂log π"
    if close(got, np.array([-beta * sig_plus, beta * sig_plus])):
        return (
            "dL/dm of −log σ(m) is −σ(−m) = −(1 − σ(m)): the pull fades as the margin grows, it does not grow with it"
        )
    if close(got, dpo_gradient(policy, np.zeros(2), beta)):
        return (
            "the margin compares log-ratios log π_θ − log π_ref: the reference log-probabilities "
            "shift m, and with it σ(−m)"
        )
    if abs(got[0] + got[1]) > 1e-12:
        return (
            "L depends on the two log-probabilities only through their difference, so the two "
            "components are equal and opposite"
        )
    return "∂L/∂log π_θ(y_w) = dL/dm · ∂m/∂log π_θ(y_w) with dL/dm = −σ(−m) and ∂m/∂log π_θ(y_w) = β"


@exercise("dpo_gradient", page="notebooks/11-labs/06-dpo.md", signature=("policy", "reference", "beta"))
def dpo_gradient(candidate) -> CheckResult:
    """return ∂L/∂[log π_θ(y_w), log π_θ(y_l)] [2] of L = −log σ(m), m = β·[(π_w − ref_w) − (π_l −
    ref_l)] (policy, reference [2] = [chosen, rejected] log-probs, beta > 0)"""
    from labkit.labs.dpo import dpo_gradient as reference_gradient

    for case, (policy, reference, beta) in _dpo_cases().items():
        policy, reference = np.array(policy), np.array(reference)
        expected = reference_gradient(policy, reference, beta)
        with in_case(case):
            got = numeric_array(call(candidate, policy.copy(), reference.copy(), beta), "the gradient", (2,))
        failed = not_finite(
            got,
            expected,
            what="gradient",
            case=case,
            rule="every component is a finite number",
            hint="σ(−m) far out on the curve: e^(±900) overflows, so write σ(−m) in a form "
            "whose exponential cannot blow up (e.g. 1 / (1 + e^m), which tends to 0 or 1)",
        )
        if failed is not None:
            return failed
        bad = first_bad_index(got, expected)
        if bad is not None:
            which = ("chosen", "rejected")[bad[0]]
            return failure_at(
                "a gradient component differs",
                got,
                expected,
                bad,
                where=f"case “{case}”, gradient[{bad[0]}] (∂L/∂log π_θ of the {which} answer)",
                rule="∂L/∂log π_θ(y_w) = −β·σ(−m), ∂L/∂log π_θ(y_l) = +β·σ(−m) (within 1e-12)",
                hint=_dpo_hint(got, policy, reference, beta, expected),
            )
    from labkit.labs import dpo

    lab = reference_gradient(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA)
    return passed(
        f"all {len(_dpo_cases())} pairs match; the lab's pair gets {lab.tolist()}, the source's analytic gradient"
    )
