"""The public checks of chapter 11's labs 07–09 (GRPO, KL, speculative sampling): the properties a right
answer must have, tested against the labs' own kernels and samplers; no reference and no stored answer.
The predictions' answers (self-tests the page's next cell answers anyway) are computed by the kernels.
Labs 10–13 are in ``labs_ii_serving``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from labkit.check.core import properties, value
from labkit.check.grading import CandidateProblem, as_array, call, failure, unpack
from labkit.labs import grpo, kl, speculative
from labkit.nn.attention import softmax


def number(value, name: str) -> float:
    """The reader's ``value`` as one finite or infinite real number (a NumPy scalar or 0-d array too)."""
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise CandidateProblem(f"{name} must be one number, got {type(value).__name__}")
    try:
        return float(np.asarray(value, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        raise CandidateProblem(f"{name} must be one number, got {type(value).__name__} {value!r:.60}") from None


def close(got: float, want: float, atol: float) -> bool:
    return bool(np.isfinite(got)) and abs(got - want) <= atol


# --- 07 GRPO -----------------------------------------------------------------------------------------


def _reward_groups():
    return [
        ("the lab's three groups", np.array(grpo.REWARDS)),
        ("one success in eight", np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]])),
        ("two answers", np.array([[3.0, -1.0]])),
        ("five groups of six graded rewards", np.random.default_rng(7).uniform(0.0, 1.0, size=(5, 6)).round(2)),
    ]


@properties()
def rloo_advantages(piece):
    """Each group's advantages sum to zero; raising one reward by d raises its own advantage by d and
    lowers each sibling's by d/(K − 1) (a baseline without the answer it judges); other groups stay."""
    for label, rewards in _reward_groups():
        base = as_array(call(piece, rewards.copy()), "advantages", rewards.shape, dtype_kind="number")
        sums = base.sum(axis=-1)
        if not np.allclose(sums, 0.0, rtol=0, atol=1e-9):
            g = int(np.flatnonzero(np.abs(sums) > 1e-9)[0])
            return failure("a group's advantages do not sum to zero", where=f"case “{label}”, group {g}", got=sums[g])
        k, step = rewards.shape[-1], 0.5
        for i in range(k):
            moved = rewards.copy()
            moved[0, i] += step
            change = as_array(call(piece, moved), "advantages", rewards.shape, dtype_kind="number") - base
            want = np.zeros_like(change)
            want[0] = -step / (k - 1)
            want[0, i] = step
            bad = np.argwhere(~np.isclose(change, want, rtol=0, atol=1e-9))
            if bad.size:
                g, j = (int(v) for v in bad[0])
                where = f"case “{label}”, reward [0, {i}] raised by {step}: the change of advantage [{g}, {j}]"
                return failure("a reward moves the advantages the wrong amount", where=where, got=change[g, j])
    return None


@cache
def _uninformative_share(p: float, k: int, groups: int = 40_000) -> float:
    """Share of simulated groups (k answers, each right with probability p) whose GRPO advantages are all 0."""
    rewards = (np.random.default_rng(11).random((groups, k)) < p).astype(np.float64)
    return float(np.mean(np.all(grpo.group_advantages(rewards) == 0.0, axis=-1)))


INFORMATIVE_CASES = ((0.3, 4), (0.5, 8), (0.9, 16), (0.05, 3), (0.75, 2))


@properties()
def informative_group_probability(piece):
    """No group of one answer, or of always-right or always-wrong answers, carries a signal; otherwise the
    probability agrees with groups sampled and run through ``grpo.group_advantages`` (within 6 SE)."""
    for p, k in ((0.0, 5), (1.0, 5), (0.4, 1)):
        got = number(call(piece, p, k), "the probability")
        if not close(got, 0.0, 1e-12):
            return failure("such a group never teaches anything", where=f"p = {p}, k = {k}", got=got)
    for p, k in INFORMATIVE_CASES:
        got, seen = number(call(piece, p, k), "the probability"), 1.0 - _uninformative_share(p, k)
        if not close(got, seen, 6 * np.sqrt(max(seen * (1 - seen), 1e-6) / 40_000)):
            where = f"p = {p}, k = {k}: 40 000 sampled groups, more than 6 standard errors away"
            return failure("the sampled groups disagree with your probability", where=where, got=got)
    return None


@value
def dual_clip_value() -> float:
    return float(grpo.dual_clip_objective(np.array([5.0]), np.array([-2.0]), 0.2, 3.0)[0])


# --- 08 KL ---------------------------------------------------------------------------------------------

KL_PAIR = ([0.9, 0.1, 0.0], [0.5, 0.25, 0.25])


@value
def finite_direction() -> str:
    return "pq" if np.isfinite(kl.kl_divergence(*KL_PAIR)) else "qp"


GAUSSIAN_CASES = (
    (0.0, 1.0, 0.0, 1.0),
    (0.3, 0.7, -1.0, 1.5),
    (2.0, 3.0, 0.0, 0.8),
    (-1.0, 0.4, 1.0, 2.0),
    (5, 1, 5, 4),
)


def gaussian_kl_on_grid(mu_p, sigma_p, mu_q, sigma_q, points: int = 20_001) -> float:
    """Σ p·(log p − log q) over a fine grid wide enough for both: the definition, summed."""
    reach = 14 * max(sigma_p, sigma_q)
    x = np.linspace(min(mu_p, mu_q) - reach, max(mu_p, mu_q) + reach, points)
    log_p, log_q = (-0.5 * ((x - m) / s) ** 2 for m, s in ((mu_p, sigma_p), (mu_q, sigma_q)))
    log_p, log_q = (v - np.log(np.sum(np.exp(v - v.max()))) - v.max() for v in (log_p, log_q))
    return float(np.sum(np.exp(log_p) * (log_p - log_q)))


@properties()
def gaussian_kl(piece):
    """KL(N(μ_p, σ_p²) ‖ N(μ_q, σ_q²)) agrees with the sum that defines it, taken on a fine grid."""
    for case in GAUSSIAN_CASES:
        got, summed = number(call(piece, *case), "KL"), gaussian_kl_on_grid(*case)
        if not close(got, summed, 1e-7 * (1 + summed)):
            where = f"μ_p = {case[0]}, σ_p = {case[1]}, μ_q = {case[2]}, σ_q = {case[3]}"
            return failure("the divergence summed on a grid disagrees", where=where, got=got)
    return None


def _logit_pairs():
    return [
        ("seeded logits [8]", np.random.default_rng(8).normal(size=8), np.random.default_rng(9).normal(size=8)),
        ("logits in the thousands", np.array([1000.0, 990.0, 0.0]), np.array([995.0, 1000.0, 10.0])),
        ("a token z_q puts 800 below the other", np.array([0.0, 0.0]), np.array([0.0, -800.0])),
        ("six logits", np.random.default_rng(6).normal(0, 3, size=6), np.random.default_rng(60).normal(0, 3, size=6)),
    ]


@properties()
def kl_from_logits(piece):
    """Finite, 0 for equal rows, blind to a constant added to either row, and its slope in z_q is
    softmax(z_q) − softmax(z_p) (central differences)."""
    for label, z_p, z_q in _logit_pairs():
        got = number(call(piece, z_p.copy(), z_q.copy()), "KL")
        if not np.isfinite(got) or got < -1e-12:
            return failure("KL between two rows of finite logits is finite and ≥ 0", where=f"case “{label}”", got=got)
        same = number(call(piece, z_p.copy(), z_p.copy()), "KL")
        if not close(same, 0.0, 1e-9):
            return failure("a row against itself is 0", where=f"case “{label}”, z_q = z_p", got=same)
        shifted = number(call(piece, z_p + 5.0, z_q - 3.0), "KL")
        if not close(shifted, got, 1e-9 * (1 + abs(got))):
            return failure(
                "adding a constant to a row changed KL", where=f"case “{label}”, z_p + 5, z_q − 3", got=shifted
            )
        slope = softmax(z_q) - softmax(z_p)
        for j in range(z_q.size):
            step = np.zeros_like(z_q)
            step[j] = 1e-4
            up, down = (number(call(piece, z_p.copy(), z_q + s), "KL") for s in (step, -step))
            if not close((up - down) / 2e-4, slope[j], 1e-5):
                where = f"case “{label}”, ∂KL/∂z_q[{j}] by central differences"
                return failure("the slope of your KL in z_q is off", where=where, got=(up - down) / 2e-4)
    return None


# --- 09 speculative sampling -----------------------------------------------------------------------------

#: u and v on a grid of cell midpoints: the law of a deterministic verifier, exact to about 1/GRID
GRID = 200
DRAFT_PAIR = ([0.5, 0.5, 0.0], [0.2, 0.3, 0.5])


def speculative_pairs():
    (_, equal_p, equal_q), (_, disjoint_p, disjoint_q) = speculative.EDGE_CASES
    pairs = {
        "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]": (speculative.TARGET, speculative.DRAFT),
        "draft equal to target": (equal_p, equal_q),
        "disjoint support: p = [0, 0.7, 0.3], q = [0.3, 0.7, 0]": (disjoint_p, disjoint_q),
        "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]": DRAFT_PAIR,
        "six tokens, zeros on both sides": ((0.3, 0.25, 0.0, 0.2, 0.15, 0.1), (0.1, 0.25, 0.3, 0.35, 0.0, 0.0)),
    }
    return [(case, np.array(p), np.array(q)) for case, (p, q) in pairs.items()]


def verified_law(candidate):
    """The reader's ``verify_draft`` as ``law(p, q) -> (output law [V], P(the draft is kept))``: every draft
    x that q proposes, every (u, v) of a GRID × GRID midpoint grid, in one call."""

    def law(p, q):
        drafts = np.flatnonzero(q > 0)
        mid = (np.arange(GRID) + 0.5) / GRID
        x = np.repeat(drafts, GRID * GRID)
        u, v = np.tile(np.repeat(mid, GRID), drafts.size), np.tile(mid, GRID * drafts.size)
        out = as_array(call(candidate, p.copy(), q.copy(), x.copy(), u, v), "tokens", x.shape)
        if out.dtype.kind not in "iu" or out.min() < 0 or out.max() >= p.size:
            raise CandidateProblem(f"return token IDs (integers in 0 … {p.size - 1}), got {out.dtype} {out[:4]}…")
        weight = np.repeat(q[drafts], GRID * GRID) / GRID**2
        return np.bincount(out, weights=weight, minlength=p.size), float(weight[out == x].sum())

    return law


@properties(hook=verified_law)
def verify_draft(law):
    """The output law is the target's, and the draft is kept as often as any rule that keeps it can."""
    for label, p, q in speculative_pairs():
        got, kept = law(p, q)
        bad = np.flatnonzero(np.abs(got - p) > 2.0 / GRID)
        if bad.size:
            where = f"case “{label}”, P(output = {bad[0]}) against p({bad[0]}) = {p[bad[0]]:g}"
            return failure("the output does not follow the target's law", where=where, got=got[bad[0]])
        best = float(np.minimum(p, q).sum())
        if kept < best - 2.0 / GRID:
            return failure("the draft is kept less often than it could be", where=f"case “{label}”", got=kept)
    return None


def draft_parts(candidate):
    """The reader's (accept, residual); accept where q = 0 is never used, so it is not checked."""

    def piece(p, q):
        accept, residual = unpack(call(candidate, p.copy(), q.copy()), ("accept", "residual"))
        accept = np.where(q > 0, as_array(accept, "accept", p.shape, dtype_kind="number"), 0.0)
        return accept, as_array(residual, "residual", p.shape, dtype_kind="number")

    return piece


@properties(hook=draft_parts)
def second_draft(piece):
    """With the lab's first verification in front, the tree's output law is p; the second accept is a
    probability; its residual a law (zeros if never reached); no token both turned away and owed."""
    for label, p, q in speculative_pairs():
        if np.allclose(p, q):
            continue
        accept, residual = piece(p, q)
        first = speculative.speculative_mass(p, q)
        rejected = 1.0 - float(np.sum(q * accept))
        problem = _second_verification_problem(p, q, accept, residual, rejected, first)
        if problem is not None:
            message, index, got = problem
            return failure(message, where=f"case “{label}”, {index}", got=got)
    return None


def _second_verification_problem(p, q, accept, residual, rejected, first):
    """(message, where, the reader's value) of the first property that fails, or None."""
    if np.any((accept < -1e-12) | (accept > 1 + 1e-12)):
        i = int(np.argmax((accept < -1e-12) | (accept > 1 + 1e-12)))
        return "an accept probability lies outside [0, 1]", f"accept[{i}]", accept[i]
    total = residual.sum()
    if np.any(residual < -1e-12) or not (abs(total - 1) < 1e-9 or (rejected < 1e-12 and abs(total) < 1e-12)):
        return "the residual is not a law (≥ 0, summing to 1)", "Σ residual", total
    output = first.accepted_mass + first.reject_probability * (q * accept + rejected * residual)
    if not np.allclose(output, p, rtol=0, atol=1e-12):
        i = int(np.argmax(np.abs(output - p)))
        return "the tree's output does not follow the target's law", f"P(output = {i}) = p({i}) = {p[i]:g}", output[i]
    idle = (q > 0) & (accept < 1 - 1e-12) & (residual > 1e-12)
    if idle.any():
        i = int(np.argmax(idle))
        return "a token is turned away as a draft yet owed by the residual", f"accept[{i}]", accept[i]
    return None


@value
def rejection_probability() -> float:
    return float(speculative.speculative_mass(*DRAFT_PAIR).reject_probability)


@cache
def simulated_tokens(alphas: tuple[float, ...], rounds: int = 40_000) -> tuple[float, float]:
    """(mean, standard error) of tokens per target call, from ``speculative.simulate`` at each draft position
    (target [α, 1 − α] against a draft that always proposes token 0): 1 + drafts kept before the first rejection."""
    kept = np.ones(rounds, dtype=bool)
    tokens = np.ones(rounds)
    for j, alpha in enumerate(alphas):
        kept &= speculative.simulate([alpha, 1.0 - alpha], [1.0, 0.0], rounds, seed=100 + j).accepted
        tokens += kept
    return float(tokens.mean()), float(tokens.std() / np.sqrt(rounds))


#: the draft positions' acceptance rates the checker simulates
POSITION_CASES = ((0.8, 0.8, 0.8), (0.9, 0.7, 0.5, 0.3), (0.6,), (0.95, 0.0, 0.9), (0.99,) * 8)


@properties()
def tokens_per_target_call(piece):
    """No draft: 1 token; drafts always kept: k + 1; equal rates: the page's closed form; any rates:
    the simulated sampler's mean (within 6 SE)."""
    exact = [
        ((), 1.0),
        ((1.0, 1.0, 1.0), 4.0),
        ((0.7,) * 5, float(speculative.expected_tokens_per_target_call(0.7, 5))),
    ]
    for alphas, want in exact:
        got = number(call(piece, list(alphas)), "tokens per call")
        if not close(got, want, 1e-9):
            return failure("an exact case is off", where=f"alphas = {list(alphas)}", got=got)
    for alphas in POSITION_CASES:
        (mean, error), got = simulated_tokens(alphas), number(call(piece, list(alphas)), "tokens per call")
        if not close(got, mean, 6 * error + 1e-12):
            where = f"alphas = {list(alphas)}: 40 000 simulated rounds, more than 6 standard errors away"
            return failure("the simulated sampler disagrees", where=where, got=got)
    return None


BREAK_EVEN_CASES = ((0.8, 4), (0.5, 3), (0.95, 8), (0.3, 1), (0.9, 2))


@properties()
def break_even_draft_cost(piece):
    """Drafts never kept pay at no cost; at your cost c the simulated speedup tokens / (c·k + 1) is 1."""
    got = number(call(piece, 0.0, 3), "the cost")
    if not close(got, 0.0, 1e-12):
        return failure("drafts that are never kept cannot pay", where="alpha = 0, k = 3", got=got)
    for alpha, k in BREAK_EVEN_CASES:
        (mean, error), got = simulated_tokens((alpha,) * k), number(call(piece, alpha, k), "the cost")
        if not close(got * k + 1, mean, 6 * error + 1e-12):
            where = f"alpha = {alpha}, k = {k}: 40 000 simulated rounds, more than 6 standard errors away"
            return failure("at your cost the speedup is not 1", where=where, got=got)
    return None
