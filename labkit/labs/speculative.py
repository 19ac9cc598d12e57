"""Lab ``speculative_sampling``: why draft-then-verify sampling leaves the target law unchanged.

At one prefix a cheap draft model proposes a token x ~ q; the target model, whose law is p,
accepts it with probability α(x) = min(1, p(x)/q(x)).  On rejection a replacement is drawn
from the residual r = max(p − q, 0) / Σ max(p − q, 0).  Token by token the output mass is

    P(out = x) = q(x)·α(x) + β·r(x),      β = 1 − Σ_y q(y)·α(y)   (the rejection probability)
               = min(p(x), q(x)) + max(p(x) − q(x), 0) = p(x)

A token the draft never proposes (q(x) = 0) is never divided by: its mass comes from the residual alone.

The supplement ``wrong_rejection_fallback`` refills a rejected draft from p itself instead of r:
P_wrong(x) = q(x)·α(x) + β·p(x) counts the overlap min(p, q) twice; its distance from p is reported as
L1 = Σ|P_wrong − p| and TV = L1 / 2, by exact enumeration at one prefix.
"""

from typing import NamedTuple

import numpy as np

from labkit.core.guards import is_integer
from labkit.labs import DEFAULT_SAMPLES
from labkit.labs.common import check_samples, require, require_close
from labkit.labs.kl import same_outcomes

TARGET = (0.6, 0.3, 0.1)
DRAFT = (0.4, 0.4, 0.2)
SEED = 73
#: The largest |observed − p| the Monte Carlo check accepts, in standard errors √(p(1−p)/N).
SIGMA_BOUND = 6.0
#: Edge cases: draft equal to target, and draft and target each with an outcome the other lacks.
EDGE_CASES = (("equal", TARGET, TARGET), ("disjoint support", (0.0, 0.7, 0.3), (0.3, 0.7, 0.0)))
NOTE = "single-prefix acceptance law; not a full multi-token decoder or speed benchmark"
WRONG_FALLBACK_SCOPE = "exact single-prefix mass enumeration, not Monte Carlo"
FALLBACKS = ("residual", "target")


class SpeculativeMass(NamedTuple):
    """The exact decomposition at one prefix; every vector is [V]."""

    accept_probability: np.ndarray  # α(x) = min(1, p(x)/q(x)); 1 where q(x) = 0
    accepted_mass: np.ndarray  # q(x)·α(x) = min(p(x), q(x))
    reject_probability: float  # β = 1 − Σ q·α
    residual: np.ndarray  # r = max(p − q, 0) / Σ max(p − q, 0); zeros if p = q
    output: np.ndarray  # q·α + β·r  (= p for the correct rule)


def _pair(p, q) -> tuple[np.ndarray, np.ndarray]:
    """(target p, draft q), checked: [V] each."""
    return same_outcomes(("p (target)", p), ("q (draft)", q))


def speculative_mass(p, q) -> SpeculativeMass:
    """Exact output law of one draft-then-verify step for target ``p`` and draft ``q``: [V] each."""
    target, draft = _pair(p, q)
    ratio = np.ones_like(draft)
    proposed = draft > 0
    ratio[proposed] = target[proposed] / draft[proposed]
    accept = np.minimum(ratio, 1.0)
    accepted = draft * accept
    reject = float(1 - accepted.sum())
    excess = np.maximum(target - draft, 0.0)
    excess_total = excess.sum()
    residual = excess / excess_total if excess_total > 0 else np.zeros_like(target)
    return SpeculativeMass(accept, accepted, reject, residual, accepted + reject * residual)


def wrong_fallback_output(p, q) -> np.ndarray:
    """The buggy law q·α + β·p: a rejected draft is replaced by a fresh draw from p, not r. [V]."""
    mass = speculative_mass(p, q)  # checks p and q
    return mass.accepted_mass + mass.reject_probability * np.asarray(p, dtype=np.float64)


class MonteCarlo(NamedTuple):
    tokens: np.ndarray  # [samples] output token IDs
    accepted: np.ndarray  # [samples] bool, the draft token was kept
    observed: np.ndarray  # [V] empirical output frequencies


def simulate(p, q, samples: int, seed: int = SEED, fallback: str = "residual") -> MonteCarlo:
    """Draw ``samples`` steps with ``np.random.default_rng(seed)``.

    Draw order (fixed, so a seed names one result): all draft tokens x ~ q, then one uniform
    u per step (accept iff u < α(x)), then one replacement per rejected step, from the
    residual r (``fallback="residual"``) or, for the bug, from p (``fallback="target"``).
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback!r}")
    if not is_integer(samples) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    target, draft = _pair(p, q)
    mass = speculative_mass(target, draft)
    vocab = target.size
    rng = np.random.default_rng(seed)
    drafted = rng.choice(vocab, size=samples, p=draft)
    kept = rng.random(samples) < mass.accept_probability[drafted]
    tokens = drafted.copy()
    n_rejected = int(samples - np.count_nonzero(kept))
    if n_rejected:
        refill = mass.residual if fallback == "residual" else target
        tokens[~kept] = rng.choice(vocab, size=n_rejected, p=refill)
    observed = np.bincount(tokens, minlength=vocab) / samples
    return MonteCarlo(tokens, kept, observed)


def standard_error_units(observed: np.ndarray, p: np.ndarray, samples: int) -> float:
    """max_x |observed(x) − p(x)| / √(p(x)(1 − p(x))/N) over tokens with 0 < p(x) < 1."""
    spread = p * (1 - p)
    live = spread > 0
    if np.any(observed[~live] != p[~live]):
        return float("inf")  # a token with p(x) ∈ {0, 1} was seen at the wrong frequency
    if not live.any():
        return 0.0
    sigma = np.sqrt(spread[live] / samples)
    return float(np.max(np.abs(observed[live] - p[live]) / sigma))


def expected_tokens_per_target_call(alpha, k: int):
    """E[tokens per target forward pass] = (1 − α^{k+1}) / (1 − α) for ``k`` drafts; ``alpha`` scalar or [N].

    Each draft is accepted with probability α independently (the i.i.d. simplification of
    Leviathan et al.); the run stops at the first rejection, which still yields the residual
    draw, and k accepted drafts earn a bonus token from the target's (k+1)-th distribution.
    So tokens = 1 + (accepted drafts) and E = Σ_{j=0..k} α^j; α = 1 gives k + 1.
    """
    a = np.asarray(alpha, dtype=np.float64)
    if not is_integer(k) or k < 0:
        raise ValueError(f"k must be an integer number of drafted tokens ≥ 0, got {k!r}")
    if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError(f"alpha must be an acceptance rate in [0, 1], got {a.tolist()}")
    powers = a[..., None] ** np.arange(k + 1)  # [..., k+1]: α^0 … α^k
    return powers.sum(axis=-1)


def accepted_length_law(alpha: float, k: int) -> np.ndarray:
    """P(tokens per target call = n) for n = 1 … k+1 → [k+1]."""
    expected_tokens_per_target_call(alpha, k)  # validates alpha and k
    n = np.arange(k + 1)  # accepted drafts before the stop
    law = alpha**n * (1 - alpha)
    law[-1] = alpha**k  # all k accepted (+ the bonus token)
    return law


#: how far an exact output law may stand from the target p (float64 rounding)
EXACT_TOLERANCE = 1e-14


def require_exact_law(what: str, mass: SpeculativeMass, target: np.ndarray) -> None:
    """Require ``mass.output`` = p to ``EXACT_TOLERANCE``, and the same of the rule in every ``EDGE_CASES``."""
    require_close(f"{what} vs target p", mass.output, target, atol=EXACT_TOLERANCE)
    for name, edge_p, edge_q in EDGE_CASES:
        edge_law = speculative_mass(edge_p, edge_q).output
        require_close(f"{what} vs target p ({name} case)", edge_law, np.asarray(edge_p), atol=EXACT_TOLERANCE)


def run(samples: int = DEFAULT_SAMPLES, p=TARGET, q=DRAFT, seed: int = SEED) -> dict:
    """The source report's ``speculative_sampling`` object.  Checks: the exact law equals p here and in the
    edge cases; the Monte Carlo frequencies lie within six standard errors of p."""
    samples = check_samples(samples)
    target, draft = _pair(p, q)
    mass = speculative_mass(target, draft)
    require_exact_law("speculative exact output law", mass, target)

    draws = simulate(target, draft, samples, seed)
    worst = standard_error_units(draws.observed, target, samples)
    require(
        worst < SIGMA_BOUND,
        f"speculative: observed {draws.observed.tolist()} is {worst:.2f} standard errors from p "
        f"{target.tolist()} (bound {SIGMA_BOUND})",
    )
    return {
        "target": target.tolist(),
        "draft": draft.tolist(),
        "accept_probability": mass.accept_probability.tolist(),
        "accepted_output_mass": mass.accepted_mass.tolist(),
        "reject_probability": mass.reject_probability,
        "residual_distribution": mass.residual.tolist(),
        "exact_output_distribution": mass.output.tolist(),
        "exact_max_abs_error": float(np.max(np.abs(mass.output - target))),
        "monte_carlo_seed": seed,
        "samples": samples,
        "observed_distribution": draws.observed.tolist(),
        "observed_acceptance_rate": float(draws.accepted.mean()),
        "max_standard_error_units": worst,
        "standard_error_bound_units": SIGMA_BOUND,
        "note": NOTE,
    }


def run_wrong_fallback() -> dict:
    """The source report's ``wrong_rejection_fallback`` object.  Checks: the correct rule reproduces p,
    here and in the edge cases; the wrong rule's mass sums to 1 and differs from p."""
    target, draft = np.array(TARGET), np.array(DRAFT)
    mass = speculative_mass(target, draft)
    wrong = wrong_fallback_output(target, draft)
    require_exact_law("wrong_fallback: correct rule's output law", mass, target)
    require_close("wrong_fallback: total mass of the wrong rule vs 1", wrong.sum(), 1.0, atol=1e-12)
    gap = wrong - target
    l1 = float(np.abs(gap).sum())
    require(l1 > 1e-12, f"wrong_fallback: refilling from p should distort the law, but L1 = {l1!r}")  # β > 0, r ≠ p
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
        "scope": WRONG_FALLBACK_SCOPE,
    }
