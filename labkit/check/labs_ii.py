"""Exercises of the chapter-11 labs 06–12: DPO, GRPO, KL, speculative sampling, the two
supplements and the reports.

Each checker feeds the reader's function the lab's own inputs (the chapter's numbers, taken
from the lab modules) and a few edge cases — zeros in q, equal and disjoint supports, a
group of identical rewards, a margin far out on the curve — compares with the lab's
reference, and stops at the first divergence.  Hints name the idea that was missed; they are
chosen by recognising the usual mistakes (a flipped sign, the other ``ddof``, 0·log 0, a
refill from p, a per-rank mean, …).  Inputs are always copies.
"""

from __future__ import annotations

import copy
import math
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from labkit.check.core import (
    CandidateProblem,
    CheckResult,
    call,
    exercise,
    first_bad_index,
    non_finite_index,
    numeric_array,
    quiet_call,
    unpack,
)

_ATOL = 1e-12
_PAGES = "notebooks/11-labs/"


def _close(got: np.ndarray, other: np.ndarray, atol: float = _ATOL) -> bool:
    """Same shape and every element within ``atol`` (used to recognise a typical mistake)."""
    other = np.asarray(other, dtype=np.float64)
    return got.shape == other.shape and bool(np.all(np.isfinite(other))) and \
        bool(np.allclose(got, other, rtol=0.0, atol=atol))


@contextmanager
def _in_case(case: str):
    """A problem with the candidate (crash, wrong type or shape) names the case it happened on."""
    try:
        yield
    except CandidateProblem as problem:
        if "not yet implemented" in str(problem):
            raise
        raise CandidateProblem(f"on case “{case}”: {problem}") from None


def _number(value, name: str) -> float:
    """A single real number (NaN and ±inf allowed here: the caller judges them)."""
    if isinstance(value, bool):
        raise CandidateProblem(f"{name} must be a number, got a bool ({value})")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CandidateProblem(f"{name} must be a number, got {type(value).__name__}") from None
    if array.size != 1:
        raise CandidateProblem(f"{name} must be one number, got an array of shape {list(array.shape)}")
    return float(array.reshape(()))


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in np.asarray(values, dtype=np.float64).ravel()) + "]"


# --- 06: the DPO gradient --------------------------------------------------------------------

def _dpo_cases() -> dict[str, tuple[tuple[float, float], tuple[float, float], float]]:
    from labkit.labs import dpo

    lowered = tuple(float(a + b) for a, b in zip(dpo.POLICY_LOG_PROBS, dpo.BOTH_LOWER_SHIFT, strict=True))
    return {
        "the lab's pair (policy [−2, −3], reference [−2.5, −2.5], β = 0.2)":
            (dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA),
        "the counterexample: both answers lowered (policy [−3, −5])":
            (lowered, dpo.REFERENCE_LOG_PROBS, dpo.BETA),
        "a reference that prefers the rejected answer (reference [−3, −0.5], β = 0.5)":
            ((-1.0, -1.5), (-3.0, -0.5), 0.5),
        "equal log-ratios, m = 0 (β = 0.3)": ((-1.0, -2.0), (-1.0, -2.0), 0.3),
        "a pair ranked overwhelmingly wrong, m ≈ −900 (β = 1)": ((-900.0, -0.5), (-1.0, -1.0), 1.0),
    }


def _dpo_hint(got, policy, reference, beta, expected) -> str:
    from labkit.labs.dpo import dpo_gradient, dpo_margin

    margin = dpo_margin(policy, reference, beta)
    sig_plus = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0          # σ(m)
    if _close(got, -expected):
        return ("the sign is flipped: raising the chosen answer's log-probability raises m and lowers L, "
                "so ∂L/∂log π_θ(y_w) is negative")
    if _close(got, expected / beta):
        return "the chain rule through m = β·Δ brings a factor β: ∂L/∂log π = dL/dm · ∂m/∂log π"
    if _close(got, np.array([-beta * sig_plus, beta * sig_plus])):
        return ("dL/dm of −log σ(m) is −σ(−m) = −(1 − σ(m)): the pull fades as the margin grows, "
                "it does not grow with it")
    if _close(got, dpo_gradient(policy, np.zeros(2), beta)):
        return ("the margin compares log-ratios log π_θ − log π_ref: the reference log-probabilities "
                "shift m, and with it σ(−m)")
    if abs(got[0] + got[1]) > 1e-12:
        return ("L depends on the two log-probabilities only through their difference, so the two "
                "components are equal and opposite")
    return "∂L/∂log π_θ(y_w) = dL/dm · ∂m/∂log π_θ(y_w) with dL/dm = −σ(−m) and ∂m/∂log π_θ(y_w) = β"


@exercise(
    "dpo_gradient",
    page=_PAGES + "06-dpo.md",
    signature=("policy", "reference", "beta"),
    task="return ∂L/∂[log π_θ(y_w), log π_θ(y_l)] [2] of L = −log σ(m), "
         "m = β·[(π_w − ref_w) − (π_l − ref_l)] (policy, reference [2] = [chosen, rejected] log-probs, beta > 0)",
)
def dpo_gradient(candidate) -> CheckResult:
    from labkit.labs.dpo import dpo_gradient as reference_gradient

    name = "dpo_gradient"
    for case, (policy, reference, beta) in _dpo_cases().items():
        policy, reference = np.array(policy), np.array(reference)
        expected = reference_gradient(policy, reference, beta)
        with _in_case(case):
            got = numeric_array(quiet_call(candidate, policy.copy(), reference.copy(), beta), "the gradient", (2,))
        broken = non_finite_index(got)
        if broken is not None:
            return CheckResult(name, False, "the gradient is not finite", where=f"case “{case}”, gradient{list(broken)}",
                               rule="every component is a finite number", got=got[broken].item(),
                               expected=expected[broken].item(),
                               hint="σ(−m) far out on the curve: e^(±900) overflows, so write σ(−m) in a form "
                                    "whose exponential cannot blow up (e.g. 1 / (1 + e^m), which tends to 0 or 1)")
        bad = first_bad_index(got, expected)
        if bad is not None:
            which = ("chosen", "rejected")[bad[0]]
            return CheckResult(name, False, "a gradient component differs",
                               where=f"case “{case}”, gradient[{bad[0]}] (∂L/∂log π_θ of the {which} answer)",
                               rule="∂L/∂log π_θ(y_w) = −β·σ(−m), ∂L/∂log π_θ(y_l) = +β·σ(−m) (within 1e-12)",
                               got=got[bad].item(), expected=expected[bad].item(),
                               hint=_dpo_hint(got, policy, reference, beta, expected))
    from labkit.labs import dpo

    lab = reference_gradient(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA)
    return CheckResult(name, True, f"all {len(_dpo_cases())} pairs match; the lab's pair gets "
                                   f"{lab.tolist()}, the source's analytic gradient")


# --- 07: the GRPO group advantage ------------------------------------------------------------

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
    centred = rewards - np.mean(rewards, axis=1)[:, None]                  # r − mean, per group
    var = np.sum(centred**2, axis=1)[:, None] / (k - ddof)                 # std_ddof², per group
    rule = "Â[g, k] = (r[g, k] − mean(r[g])) / (std_ddof(r[g]) + ε) (within 1e-12)"
    if _close(got, group_advantages(rewards, ddof=1 - ddof, eps=eps)):
        return rule, (f"these are the advantages for ddof {1 - ddof}: ddof 0 divides the squared deviations by K, "
                      "ddof 1 by K − 1; use the ddof you are given (np.std takes it as an argument)")
    with np.errstate(all="ignore"):
        inside = centred / np.sqrt(var + eps)
        no_eps = centred / np.sqrt(var)
        spread_all = np.std(rewards, ddof=ddof) + eps                      # one std for the whole batch
        whole = (rewards - np.mean(rewards)) / spread_all
        batch_std = centred / spread_all
    if eps > 0 and _close(got, inside):
        return rule, "ε is added to the standard deviation, after the square root, not to the variance"
    if eps > 0 and _close(got, no_eps):
        return rule, "ε is part of the denominator: std + ε"
    if _close(got, centred):
        return rule, "standardise: divide the centred rewards by the group's std + ε"
    if _close(got, whole) or _close(got, batch_std):
        return rule, ("each group is one prompt's answers: take the mean and the std inside each group "
                      "(along axis 1), not over the whole batch")
    return rule, "centre each reward on its group's mean, then divide by that group's std (with the given ddof) + ε"


@exercise(
    "grpo_advantages",
    page=_PAGES + "07-grpo-and-ppo-clip.md",
    signature=("rewards", "ddof", "eps"),
    task="return Â [G, K] = (r − mean(r)) / (std(r) + eps) within each group of rewards [G, K] "
         "(std with ddof 0 or 1, eps ≥ 0)",
)
def grpo_advantages(candidate) -> CheckResult:
    from labkit.labs.grpo import group_advantages

    name = "grpo_advantages"
    for case, (rewards, ddof, eps) in _grpo_cases().items():
        expected = group_advantages(rewards, ddof=ddof, eps=eps)
        with _in_case(case):
            got = numeric_array(quiet_call(candidate, rewards.copy(), ddof, eps), "the advantages", expected.shape)
        broken = non_finite_index(got)
        if broken is not None:
            g = broken[0]
            return CheckResult(name, False, "an advantage is not finite",
                               where=f"case “{case}”, advantage{list(broken)} (group {g} = {_fmt(rewards[g])})",
                               rule="a group of identical rewards gets advantage 0",
                               got=got[broken].item(), expected=expected[broken].item(),
                               hint="identical rewards have std 0, so (r − mean) / std is 0/0; ε in the "
                                    "denominator keeps it 0 — such a group carries no learning signal")
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        g = bad[0]
        rule, hint = _grpo_hint(got, rewards, ddof, eps)
        return CheckResult(name, False, "an advantage differs",
                           where=f"case “{case}”, advantage{list(bad)} (group {g} = {_fmt(rewards[g])})",
                           rule=rule, got=got[bad].item(), expected=expected[bad].item(), hint=hint)
    lab = group_advantages(*_grpo_cases()["the lab's three groups, ddof 1, ε = 1e-8"])
    return CheckResult(name, True, f"all {len(_grpo_cases())} cases match; the lab's split group gets "
                                   f"±{float(lab[0, 3])!r} with ddof 1, identical groups exactly 0")


# --- 08: KL with its support rules -----------------------------------------------------------

def _kl_cases() -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    from labkit.labs import kl

    return {
        "the lab's KL(p ‖ q), p = [0.8, 0.2], q = [0.5, 0.5]": (kl.P, kl.Q),
        "the lab's reverse direction KL(q ‖ p)": (kl.Q, kl.P),
        "p against itself": (kl.P, kl.P),
        "a zero in p: p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]": ((0.9, 0.1, 0.0), (0.5, 0.25, 0.25)),
        "the same pair reversed: mass where the reference has none": ((0.5, 0.25, 0.25), (0.9, 0.1, 0.0)),
        "the lab's zero-support pair: [0.5, 0.5] against [1, 0]": (kl.ZERO_SUPPORT_P, kl.ZERO_SUPPORT_Q),
        "equal supports with a shared zero: [0.5, 0, 0.5] against [0.25, 0, 0.75]": ((0.5, 0.0, 0.5), (0.25, 0.0, 0.75)),
        "disjoint supports: [0.5, 0.5, 0, 0] against [0, 0, 0.5, 0.5]": ((0.5, 0.5, 0.0, 0.0), (0.0, 0.0, 0.5, 0.5)),
    }


def _kl_hint(got: float, expected: float, p: np.ndarray, q: np.ndarray) -> tuple[str, str]:
    from labkit.labs.kl import kl_divergence

    if math.isnan(got):
        return ("terms with p_i = 0 contribute 0",
                "0·log(0/q) is NaN in floating point, but its limit is 0: sum only over the outcomes with p_i > 0")
    if math.isinf(expected):
        return ("KL(p ‖ q) = +∞ when some q_i = 0 < p_i",
                "p puts mass on an outcome q rules out: log(p_i / 0) = +∞, so the divergence is infinite — "
                "do not drop that term or pad q with a small number")
    if math.isinf(got):
        return ("only q_i = 0 < p_i makes KL infinite",
                "an outcome with p_i = 0 contributes nothing, whatever q_i is (even 0)")
    rule = "KL(p ‖ q) = Σ_{i: p_i > 0} p_i·log(p_i / q_i) in nats (within 1e-12)"
    reverse = kl_divergence(q, p)
    if math.isfinite(reverse) and abs(got - reverse) <= _ATOL and abs(reverse - expected) > _ATOL:
        return rule, "that is KL(q ‖ p): the weights of KL(p ‖ q) are p's, and the ratio is p_i / q_i"
    if abs(got - expected / math.log(2)) <= _ATOL:
        return rule, "that is in bits: nats use the natural logarithm"
    if abs(got - expected) < 1e-6:
        return rule, ("very close but not equal: a small constant added to avoid log 0 shifts every term; "
                      "skip the p_i = 0 terms instead")
    return rule, "weight each log-ratio log(p_i / q_i) by p_i, over the outcomes p can produce"


@exercise(
    "kl_divergence",
    page=_PAGES + "08-kl-divergence.md",
    signature=("p", "q"),
    task="return KL(p ‖ q) in nats (a float) for probability vectors p, q [V]: Σ over p_i > 0 of "
         "p_i·log(p_i / q_i); +inf when some q_i = 0 < p_i",
)
def kl_divergence(candidate) -> CheckResult:
    from labkit.labs.kl import kl_divergence as reference_kl

    name = "kl_divergence"
    for case, (p, q) in _kl_cases().items():
        p, q = np.array(p), np.array(q)
        expected = reference_kl(p, q)
        with _in_case(case):
            got = _number(quiet_call(candidate, p.copy(), q.copy()), "KL(p ‖ q)")
        if math.isinf(expected) and got == math.inf:
            continue
        if math.isfinite(expected) and math.isfinite(got) and abs(got - expected) <= _ATOL:
            continue
        rule, hint = _kl_hint(got, expected, p, q)
        return CheckResult(name, False, "the divergence differs", where=f"case “{case}”", rule=rule,
                           got=got, expected=expected, hint=hint)
    return CheckResult(name, True, f"all {len(_kl_cases())} pairs match: 0.19274475702175753 and "
                                   "0.22314355131420976 nats for the lab's pair, ∞ wherever the reference "
                                   "rules out what p produces")


# --- 09: accept probabilities and the residual ----------------------------------------------

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
    return bool(both.any()) and _close(accept[both], np.minimum(1.0, q[both] / p[both]))


def _residual_hint(got, p, q, mass) -> str:
    excess = np.clip(p - q, 0.0, None)
    if _close(got, p):
        return ("that is the target p itself: the accepted draft already supplied min(p, q), so refilling "
                "from p counts that overlap twice (the wrong fallback of this lab)")
    if _close(got, excess):
        return "the residual is a distribution: divide max(p − q, 0) by its sum, Σ max(p − q, 0) = β"
    shortfall = np.clip(q - p, 0.0, None)
    if shortfall.sum() > 0 and _close(got, shortfall / shortfall.sum()):
        return "the residual is the part of p the draft left uncovered: max(p − q, 0), not max(q − p, 0)"
    gap = np.abs(p - q)
    if gap.sum() > 0 and _close(got, gap / gap.sum()):
        return "only tokens where p exceeds q need refilling: max(p − q, 0), not |p − q|"
    return "r(x) = max(p(x) − q(x), 0) / Σ_y max(p(y) − q(y), 0): the mass of p the draft does not cover"


@exercise(
    "speculative_parts",
    page=_PAGES + "09-speculative-sampling.md",
    signature=("p", "q"),
    task="return (accept [V], residual [V]) for target p and draft q [V]: accept = min(1, p/q) (where "
         "q = 0 it is never used and not checked), residual = max(p − q, 0) / Σ max(p − q, 0), "
         "all zeros when p = q",
)
def speculative_parts(candidate) -> CheckResult:
    from labkit.labs.speculative import speculative_mass

    name = "speculative_parts"
    worst = 0.0
    for case, (p, q) in _speculative_cases().items():
        p, q = np.array(p), np.array(q)
        mass = speculative_mass(p, q)
        with _in_case(case):
            accept, residual = unpack(quiet_call(candidate, p.copy(), q.copy()), ("accept", "residual"))
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
                rule, hint = "α(x) = min(1, p(x)/q(x))", "the ratio is target over draft, p(x)/q(x): the target verifies"
            else:
                rule = "α(x) = min(1, p(x)/q(x))"
                hint = "the draft's x is kept with probability p/q when the draft over-proposes it, and always otherwise"
            return CheckResult(name, False, "an accept probability differs",
                               where=f"case “{case}”, accept[{x}] (p = {p[x]:g}, q = {q[x]:g})",
                               rule=rule, got=accept[x].item(),
                               expected=mass.accept_probability[x].item(), hint=hint)
        broken = non_finite_index(residual)
        if broken is not None and mass.reject_probability <= 1e-15:
            return CheckResult(name, False, "the residual is not finite", where=f"case “{case}”, residual{list(broken)}",
                               rule="when p = q the residual is all zeros (it is never drawn from)",
                               got=residual[broken].item(), expected=0.0,
                               hint="with p = q nothing is ever rejected and Σ max(p − q, 0) = 0: there is "
                                    "nothing to normalise, so do not divide by it")
        bad = first_bad_index(residual, mass.residual)
        if bad is not None:
            (x,) = bad
            return CheckResult(name, False, "the residual differs",
                               where=f"case “{case}”, residual[{x}] (p = {p[x]:g}, q = {q[x]:g})",
                               rule="r(x) = max(p(x) − q(x), 0) / Σ max(p − q, 0) (within 1e-12)",
                               got=residual[x].item(), expected=mass.residual[x].item(),
                               hint=_residual_hint(residual, p, q, mass))
        output = np.where(proposed, q * accept, 0.0) + mass.reject_probability * residual
        worst = max(worst, float(np.max(np.abs(output - p))))
    return CheckResult(name, True, f"all {len(_speculative_cases())} pairs match; with your α and r the output "
                                   f"law q·α + β·r equals p everywhere (largest gap {worst:.1e})")


# --- 10: the bandwidth lower bound of one decode step ----------------------------------------

def _bandwidth_cases():
    from labkit.labs.bandwidth import DecodeBudget

    source = DecodeBudget()
    return {
        "the source's 7B fp16 layout, batch 1": (source, 1),
        "the source's 7B fp16 layout, batch 8": (source, 8),
        "one byte per weight and per cache element, batch 8":
            (DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1), 8),
        "32 KV heads instead of 8, batch 8": (DecodeBudget(n_kv_heads=32), 8),
        "a 1.5B model, 28 layers, 2 KV heads, 32 768 tokens, 2 TB/s, batch 64":
            (DecodeBudget(n_params=1_500_000_000, n_layers=28, context=32_768, n_kv_heads=2,
                          bandwidth_bytes_per_second=2_000_000_000_000), 64),
    }


def _bandwidth_hint(got: float, budget, batch: int, expected: float) -> str:
    weights, kv, bandwidth = budget.weight_bytes, budget.kv_bytes_per_request, budget.bandwidth_bytes_per_second

    def ms(read_bytes: float) -> float:
        return read_bytes / bandwidth * 1000

    def near(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9)

    if near(expected / 1000):
        return "bytes / (bytes per second) is in seconds: the answer is in milliseconds"
    if near(ms(weights + batch * kv / 2)):
        return "the cache holds keys and values: 2 · L · T · H_kv · D_h elements per request"
    if near(ms(batch * (weights + kv))):
        return "the weights are read once per step, however many requests share it; only the caches scale with the batch"
    if near(ms(weights + kv)):
        return "each request has its own KV cache: a batch of b requests reads b caches per step"
    if near(ms(weights)):
        return "the step reads every request's KV cache as well as the weights"
    return "bytes read = N·bytes per weight + batch · 2·L·T·H_kv·D_h·bytes per element; time ≥ bytes / bandwidth"


@exercise(
    "decode_step_lower_bound_ms",
    page=_PAGES + "10-bandwidth-budget.md",
    signature=("budget", "batch"),
    task="return the streaming-read lower bound of one decode step in milliseconds: (weights + batch · "
         "K and V of one request's cache) bytes / bandwidth; budget has the fields of "
         "labkit.labs.bandwidth.DecodeBudget (n_params, bytes_per_param, n_layers, context, n_kv_heads, "
         "head_dim, kv_bytes_per_element, bandwidth_bytes_per_second), batch ≥ 1",
)
def decode_step_lower_bound_ms(candidate) -> CheckResult:
    from dataclasses import asdict
    from types import SimpleNamespace

    name = "decode_step_lower_bound_ms"
    for case, (budget, batch) in _bandwidth_cases().items():
        expected = budget.step(batch)["lower_bound_ms"]
        fields = SimpleNamespace(**asdict(budget))      # the layout's numbers, without labkit's answer
        with _in_case(case):
            got = _number(quiet_call(candidate, fields, batch), "the lower bound")
        if math.isfinite(got) and math.isclose(got, expected, rel_tol=1e-12, abs_tol=0.0):
            continue
        return CheckResult(name, False, "the lower bound differs", where=f"case “{case}”",
                           rule="t_step ≥ (N·s_w + b·2·L·T·H_kv·D_h·s_kv) / B, in ms (relative 1e-12)",
                           got=got, expected=expected, hint=_bandwidth_hint(got, budget, batch, expected))
    return CheckResult(name, True, f"all {len(_bandwidth_cases())} layouts match; the source's 7B example: "
                                   "≥ 15.073741824 ms at batch 1, ≥ 22.589934592 ms at batch 8")


# --- 11: the compensated local gradient for unequal ranks ------------------------------------

def _rank_cases():
    from labkit.labs import unequal_rank

    return {
        "the lab's ranks: two tokens of target 1, six of target 0, w = 0": {},
        "one target-1 token moved to rank 1: ranks [1] and [1, 0, 0, 0, 0, 0, 0]":
            {"rank_targets": ((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))},
        "the lab's ranks at w = 1.3": {"w": 1.3},
        "equal token counts (three each)": {"rank_targets": ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))},
        "three ranks of 1, 4 and 7 tokens": {"rank_targets": ((1.0,), (0.0, 1.0, 1.0, 0.0),
                                                              (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))},
    }, unequal_rank.run


@exercise(
    "compensated_local_gradients",
    page=_PAGES + "11-unequal-rank-gradients.md",
    signature=("rank_gradient_sums", "rank_token_counts"),
    task="return [R] the gradient each rank hands to the averaging all-reduce, so that their mean is "
         "the global token mean Σ S_r / Σ n_r (rank_gradient_sums S [R] float, rank_token_counts n [R] int)",
)
def compensated_local_gradients(candidate) -> CheckResult:
    name = "compensated_local_gradients"
    cases, run = _rank_cases()
    for case, options in cases.items():
        report = run(**options)
        sums = np.array(report["rank_gradient_sums"])
        counts = np.array(report["rank_token_counts"])
        expected = np.array(report["compensated_local_gradients"])
        with _in_case(case):
            got = numeric_array(quiet_call(candidate, sums.copy(), counts.copy()), "the local gradients", expected.shape)
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        (r,) = bad
        world, total = sums.size, counts.sum()
        global_mean = report["global_token_average"]
        if _close(got, sums / counts):
            hint = (f"these are the per-rank means S_r / n_r; the all-reduce averages them into the naive "
                    f"{float(np.mean(sums / counts))!r}, not the global {global_mean!r}")
        elif _close(got, sums / total):
            hint = f"the all-reduce divides by R = {world}: multiply by R as well as dividing by N"
        elif _close(got, np.full(world, global_mean)):
            hint = ("the mean comes out right, but rank r can only send what it knows — its own sum S_r, "
                    "plus N and R: each rank's value is its own sum, rescaled")
        else:
            hint = ("the all-reduce computes (1/R)·Σ_r g_r; choose each rank's g_r from its own S_r so that "
                    "this equals Σ S_r / N")
        return CheckResult(name, False, "a rank's local gradient differs",
                           where=f"case “{case}”, rank {r} (S_{r} = {float(sums[r])!r}, n_{r} = {int(counts[r])})",
                           rule="g_r = S_r · R / N, N = Σ n_r (within 1e-12)",
                           got=got[r].item(), expected=expected[r].item(), hint=hint)
    return CheckResult(name, True, f"all {len(cases)} cases match; the lab's ranks send [−0.25, 0.75], "
                                   "whose average 0.25 is the global token mean (the naive average is 0.0)")


# --- 12: the keys and nesting of the mechanism-labs report ------------------------------------

@lru_cache(maxsize=1)
def _real_reports() -> tuple[dict, dict, dict]:
    """(passed labs report, failed labs report, fault-injection report), built by labkit."""
    from labkit.labs import report as reports

    passed = reports.labs_report(samples=reports.MIN_SAMPLES)

    def fails():
        reports.require(False, "masks: a stand-in check that fails")

    failed = reports.labs_report(samples=reports.MIN_SAMPLES,
                                 runners={"ce_gradient": lambda: passed["labs"]["ce_gradient"], "masks": fails})
    faults = reports.faults_report()
    return passed, failed, faults


def _damaged(report: dict, change) -> dict:
    out = copy.deepcopy(report)
    change(out)
    return out


def _report_cases() -> list[tuple[str, object, str | None, str]]:
    """(case, report, key a problem must name — None for a well-formed report, hint)."""
    passed, failed, faults = _real_reports()
    return [
        ("a real report of a passing run", passed, None,
         "the real report is well formed: your rules are stricter than the format"),
        ("a real report of a failed run", failed, None,
         "a failed run's report carries failed_lab and failure, and only the labs that finished before it"),
        ("a passing report without “runtime”", _damaged(passed, lambda r: r.pop("runtime")), "runtime",
         "check that every required key is present"),
        ("a passing report whose status is “ok”", _damaged(passed, lambda r: r.update(status="ok")), "status",
         "check the values as well as the keys: status is one of two words"),
        ("a passing report without the kl lab", _damaged(passed, lambda r: r["labs"].pop("kl")), "kl",
         "a passing run reports all eight labs: look inside labs too"),
        ("a passing report with an extra top-level key “note”", _damaged(passed, lambda r: r.update(note="x")),
         "note", "a key the format does not have is a problem too: compare the key set, not only required keys"),
        ("a passing report whose runtime lacks “dtype”", _damaged(passed, lambda r: r["runtime"].pop("dtype")),
         "dtype", "nested objects have their own keys: runtime needs python, numpy, platform and dtype"),
        ("a passing report whose dpo lab is a list", _damaged(passed, lambda r: r["labs"].update(dpo=[0.2])),
         "dpo", "each lab's entry is an object (a dict), not any value"),
        ("a passing report whose elapsed_seconds is the string “0.5”",
         _damaged(passed, lambda r: r.update(elapsed_seconds="0.5")), "elapsed_seconds",
         "elapsed_seconds is a number; a string that looks like one is not"),
        ("a passing report that also names a failed_lab",
         _damaged(passed, lambda r: r.update(failed_lab="kl")), "failed_lab",
         "failed_lab and failure belong to a failed run only"),
        ("a failed report without “failure”", _damaged(failed, lambda r: r.pop("failure")), "failure",
         "a failed run must say what failed: failed_lab and failure"),
        ("a passing report with an unknown lab “ppo”",
         _damaged(passed, lambda r: r["labs"].update(ppo={})), "ppo",
         "labs holds the eight lab names of the chapter and nothing else"),
        ("the fault-injection report (another format)", faults, "labs",
         "the supplement's report has no scope, elapsed_seconds or labs object: it is not a mechanism-labs report"),
        ("a list instead of a report", [passed], None,
         "a report is a JSON object: check the type before looking up keys"),
    ]


@exercise(
    "report_problems",
    page=_PAGES + "12-the-two-reports.md",
    signature=("report",),
    task="return a list of problems (strings, each naming the key at fault; [] when well formed) with a "
         "mechanism-labs report's keys and nesting: status ('passed' | 'failed'), scope (str), "
         "timestamp_shanghai (str), runtime {python, numpy, platform, dtype}, elapsed_seconds (number), "
         "labs {lab name: object} — all eight labs when passed; failed_lab and failure (str) only when failed",
)
def report_problems(candidate) -> CheckResult:
    name = "report_problems"
    cases = _report_cases()
    for case, report, key, hint in cases:
        well_formed = key is None and isinstance(report, dict)
        try:
            problems = call(candidate, copy.deepcopy(report))
        except CandidateProblem as problem:
            if well_formed or "not yet implemented" in str(problem):
                raise
            return CheckResult(name, False, "a damaged report crashed your function", where=f"case “{case}”",
                               rule="a damaged report gets a list of problems, not an exception",
                               got=str(problem), expected=f"a problem naming {key!r}" if key else "at least one problem",
                               hint=hint + " — look before you index: a missing key or a value of the "
                                           "wrong type is a problem to report")
        if not isinstance(problems, list | tuple) or not all(isinstance(p, str) for p in problems):
            raise CandidateProblem("return a list of strings (one per problem, [] for a well-formed report), "
                                   f"got {type(problems).__name__}"
                                   + (" holding non-strings" if isinstance(problems, list | tuple) else ""))
        if well_formed and problems:
            return CheckResult(name, False, "a well-formed report was rejected", where=f"case “{case}”",
                               rule="a report labkit wrote has no problems", got=list(problems), expected=[],
                               hint=hint)
        if not well_formed and not problems:
            return CheckResult(name, False, "a damaged report passed", where=f"case “{case}”",
                               rule="every damaged report gets at least one problem", got=[],
                               expected=f"a problem naming {key!r}" if key else "at least one problem", hint=hint)
        if key is not None and not any(key in p for p in problems):
            return CheckResult(name, False, "the problem does not say where", where=f"case “{case}”",
                               rule="a problem names the key at fault", got=list(problems),
                               expected=f"a problem naming {key!r}",
                               hint="a problem should point at its place: name the key that is missing, "
                                    "unexpected or of the wrong kind")
    return CheckResult(name, True, f"all {len(cases)} reports judged right: the two real ones pass, "
                                   "every damaged one is caught at its key")
