"""Supplement ``wrong_rejection_fallback``: refill a rejected draft from p instead of the residual.

The correct rule replaces a rejected draft token with a draw from r = norm(max(p − q, 0)).
A tempting shortcut draws the replacement from the target p itself.  Its output law is

    P_wrong(x) = q(x)·α(x) + β·p(x)        (β = 1 − Σ q·α)

which counts the overlap min(p, q) twice: tokens the draft already over-proposes gain mass.
The distance from p is reported as L1 = Σ|P_wrong − p| and total variation TV = L1 / 2.
This is exact enumeration of the mass at one prefix; no sampling.
"""

from __future__ import annotations

import numpy as np

from labkit.labs.common import require, require_close
from labkit.labs.speculative import DRAFT, TARGET, require_exact_law, speculative_mass, wrong_fallback_output

SCOPE = "exact single-prefix mass enumeration, not Monte Carlo"


def run() -> dict:
    """The wrong-fallback supplement; returns the source report's ``wrong_rejection_fallback`` object.

    Checks: the correct rule reproduces p (1e-14), here and in the speculative lab's edge
    cases; the wrong rule's mass is a probability vector and, where β > 0 and p ≠ r,
    differs from p.
    """
    target, draft = np.array(TARGET), np.array(DRAFT)
    mass = speculative_mass(target, draft)
    wrong = wrong_fallback_output(target, draft)
    require_exact_law("wrong_fallback: correct rule's output law", mass, target)
    require_close("wrong_fallback: total mass of the wrong rule vs 1", wrong.sum(), 1.0, atol=1e-12)
    gap = wrong - target
    l1 = float(np.abs(gap).sum())
    if mass.reject_probability > 1e-12 and not np.allclose(mass.residual, target):
        require(l1 > 1e-12, f"wrong_fallback: refilling from p should distort the law, but L1 = {l1!r}")
    return {
        "target": target.tolist(),
        "draft": draft.tolist(),
        "accepted_mass": mass.accepted_mass.tolist(),
        "reject_mass": mass.reject_probability,
        "correct_residual": mass.residual.tolist(),
        "correct_output": mass.output.tolist(),
        "wrong_output": wrong.tolist(),
        "wrong_minus_target": gap.tolist(),
        "wrong_l1_distance": l1,
        "wrong_total_variation_distance": l1 / 2,
        "scope": SCOPE,
    }
