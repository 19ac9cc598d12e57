"""Exercise of lab 09: accept probabilities and the residual of speculative sampling."""

from __future__ import annotations

import numpy as np

from labkit.check.core import call, numeric_array, unpack
from labkit.check.grading import function


def _cases():
    from labkit.labs import speculative

    (_, equal_p, equal_q), (_, disjoint_p, disjoint_q) = speculative.EDGE_CASES
    pairs = {
        "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]": (speculative.TARGET, speculative.DRAFT),
        "draft equal to target": (equal_p, equal_q),
        "disjoint support: p = [0, 0.7, 0.3], q = [0.3, 0.7, 0]": (disjoint_p, disjoint_q),
        "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]": ((0.5, 0.5, 0.0), (0.2, 0.3, 0.5)),
        "six tokens, zeros on both sides": ((0.3, 0.25, 0.0, 0.2, 0.15, 0.1), (0.1, 0.25, 0.3, 0.35, 0.0, 0.0)),
    }
    return [(case, (np.array(p), np.array(q))) for case, (p, q) in pairs.items()]


def _unused_accept_ignored(candidate):
    """α where the draft never proposes (q = 0) is never used, so it is not checked."""

    def piece(p, q):
        accept, residual = unpack(call(candidate, p.copy(), q.copy()), ("accept", "residual"))
        return np.where(q > 0, numeric_array(accept, "accept", p.shape), 0.0), residual

    return piece


def _reference(p, q):
    from labkit.labs.speculative import speculative_mass

    mass = speculative_mass(p, q)
    return np.where(q > 0, mass.accept_probability, 0.0), mass.residual


function(
    "speculative_parts",
    "notebooks/11-labs/09-speculative-sampling.md",
    "extend",
    "return (accept [V], residual [V]) for target p and draft q [V]: accept = min(1, p/q) (where q = 0 it is "
    "never used and not checked), residual = max(p − q, 0) / Σ max(p − q, 0), all zeros when p = q",
    ("p", "q"),
    _cases,
    _reference,
    outputs=("accept", "residual"),
    hook=_unused_accept_ignored,
    idea=(
        "speculative sampling keeps the target's distribution: the target verifies the draft, and rejected "
        "mass is redistributed where the target wanted more"
    ),
    rule="the target verifies the draft, so the ratio is target over draft, and a probability never exceeds 1; "
    "the residual is a distribution over where the target wanted more — and when nothing is rejected, there is "
    "nothing to normalise",
)


def _tree_cases():
    """The pairs where the first draft can be rejected (p ≠ q): the second draft is then reached."""
    return [(case, args) for case, args in _cases() if case != "draft equal to target"]


def _second_reference(p, q):
    from labkit.labs.speculative import speculative_mass

    second = speculative_mass(speculative_mass(p, q).residual, q)
    return np.where(q > 0, second.accept_probability, 0.0), second.residual


function(
    "second_draft",
    "notebooks/11-labs/09-speculative-sampling.md",
    "extend",
    "a tree of two drafts, both drawn from q: when the target rejects the first, the second is verified. Return "
    "(accept [V], residual [V]) of that second verification — the probability that the second draft x is kept "
    "(where q = 0 it is not checked) and the law drawn from when it is rejected too (all zeros if it never is)",
    ("p", "q"),
    _tree_cases,
    _second_reference,
    outputs=("accept", "residual"),
    hook=_unused_accept_ignored,
    idea="after a rejection the token still owed is not drawn from p any more: the second draft must be judged "
    "against what the target wants given that the first was rejected",
    rule="once the first draft is rejected, the output must follow the first residual, so that law plays the "
    "target's part for the second draft, while the draft law stays q; its own leftover mass gives the last residual",
)
