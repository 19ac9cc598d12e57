"""Exercise of lab 07: the GRPO group advantage."""

from __future__ import annotations

import numpy as np

from labkit.check._support import close, failure_at, first_bad_index, fmt, in_case, non_finite_index
from labkit.check.core import CheckResult, call, exercise, failure, numeric_array, passed


def _grpo_cases() -> dict[str, tuple[np.ndarray, int, float]]:
    from labkit.labs import grpo

    lab = np.array(grpo.REWARDS)
    one_of_eight = np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]])
    mixed = np.array([[0.25, 1.5, -0.75, 2.0, 0.5], [3.0] * 5, [-1.0, 0.0, 0.0, 0.0, 4.0]])
    return {
        "the lab's three groups, ddof 0, ε = 1e-8": (lab, 0, grpo.EPSILON),
        "the lab's three groups, ddof 1, ε = 1e-8": (lab, 1, grpo.EPSILON),
        "the lab's three groups, ddof 1, ε = 1e-4": (lab, 1, 1e-4),
        "eight answers, one correct, ddof 0, ε = 0": (one_of_eight, 0, 0.0),
        "eight answers, one correct, ddof 1, ε = 0": (one_of_eight, 1, 0.0),
        "three groups of five, one of identical rewards 3.0, ddof 0, ε = 1e-6": (mixed, 0, 1e-6),
    }


def _grpo_hint(got, rewards, ddof, eps) -> tuple[str, str]:
    from labkit.labs.grpo import group_advantages

    k = rewards.shape[1]
    centred = rewards - np.mean(rewards, axis=1)[:, None]  # r − mean, per group
    var = np.sum(centred**2, axis=1)[:, None] / (k - ddof)  # std_ddof², per group
    rule = "Â[g, k] = (r[g, k] − mean(r[g])) / (std_ddof(r[g]) + ε) (within 1e-12)"
    if close(got, group_advantages(rewards, ddof=1 - ddof, eps=eps)):
        return rule, (
            f"these are the advantages for ddof {1 - ddof}: ddof 0 divides the squared deviations by K, "
            "ddof 1 by K − 1; use the ddof you are given (np.std takes it as an argument)"
        )
    with np.errstate(all="ignore"):
        inside = centred / np.sqrt(var + eps)
        no_eps = centred / np.sqrt(var)
        spread_all = np.std(rewards, ddof=ddof) + eps  # one std for the whole batch
        whole = (rewards - np.mean(rewards)) / spread_all
        batch_std = centred / spread_all
    if eps > 0 and close(got, inside):
        return (rule, "ε is added to the standard deviation, after the square root, not to the variance")
    if eps > 0 and close(got, no_eps):
        return rule, "ε is part of the denominator: std + ε"
    if close(got, centred):
        return rule, "standardise: divide the centred rewards by the group's std + ε"
    if close(got, whole) or close(got, batch_std):
        return rule, (
            "each group is one prompt's answers: take the mean and the std inside each group "
            "(along axis 1), not over the whole batch"
        )
    return (rule, "centre each reward on its group's mean, then divide by that group's std (with the given ddof) + ε")


@exercise("grpo_advantages", page="notebooks/11-labs/07-grpo-and-ppo-clip.md", signature=("rewards", "ddof", "eps"))
def grpo_advantages(candidate) -> CheckResult:
    """return Â [G, K] = (r − mean(r)) / (std(r) + eps) within each group of rewards [G, K] (std
    with ddof 0 or 1, eps ≥ 0)"""
    from labkit.labs.grpo import group_advantages

    for case, (rewards, ddof, eps) in _grpo_cases().items():
        expected = group_advantages(rewards, ddof=ddof, eps=eps)
        with in_case(case):
            got = numeric_array(call(candidate, rewards.copy(), ddof, eps), "the advantages", expected.shape)
        broken = non_finite_index(got)
        if broken is not None:
            g = broken[0]
            return failure_at(
                "an advantage is not finite",
                got,
                expected,
                broken,
                where=f"case “{case}”, advantage{list(broken)} (group {g} = {fmt(rewards[g])})",
                rule="a group of identical rewards gets advantage 0",
                hint="identical rewards have std 0, so (r − mean) / std is 0/0; ε in the "
                "denominator keeps it 0 — such a group carries no learning signal",
            )
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        g = bad[0]
        rule, hint = _grpo_hint(got, rewards, ddof, eps)
        return failure(
            "an advantage differs",
            where=f"case “{case}”, advantage{list(bad)} (group {g} = {fmt(rewards[g])})",
            rule=rule,
            got=got[bad].item(),
            expected=expected[bad].item(),
            hint=hint,
        )
    lab = group_advantages(*_grpo_cases()["the lab's three groups, ddof 1, ε = 1e-8"])
    return passed(
        f"all {len(_grpo_cases())} cases match; the lab's split group gets "
        f"±{float(lab[0, 3])!r} with ddof 1, identical groups exactly 0"
    )
