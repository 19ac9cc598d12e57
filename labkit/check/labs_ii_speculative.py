"""The public checks of chapter 11's lab 09, speculative sampling: the output law equals the target's, and the
lab's own sampler, simulated, against the reader's expectations; no stored answer.
"""

from functools import cache

import numpy as np

from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, as_array, call, failure, unpack
from labkit.check.labs_ii import close, number
from labkit.labs import speculative

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
            text = "return token IDs (integers in 0 … {size}), got {dtype} {out}…"
            raise CandidateProblem(say(text, size=p.size - 1, dtype=out.dtype, out=out[:4]))
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
            text = "case “{label}”, P(output = {bad}) against p({bad}) = {p:g}"
            where = say(text, label=label, bad=bad[0], p=p[bad[0]])
            return failure(say("the output does not follow the target's law"), where=where, got=got[bad[0]])
        best = float(np.minimum(p, q).sum())
        if kept < best - 2.0 / GRID:
            message = say("the draft is kept less often than it could be")
            return failure(message, where=say("case “{label}”", label=label), got=kept)
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
        problem = _second_verification_problem(p, q, *piece(p, q))
        if problem is not None:
            message, index, got = problem
            return failure(message, where=say("case “{label}”, {index}", label=label, index=index), got=got)
    return None


def _second_verification_problem(p, q, accept, residual):
    """(message, where, the reader's value) of the first property that fails, or None."""
    first, rejected = speculative.speculative_mass(p, q), 1.0 - float(np.sum(q * accept))
    if np.any((accept < -1e-12) | (accept > 1 + 1e-12)):
        i = int(np.argmax((accept < -1e-12) | (accept > 1 + 1e-12)))
        return say("an accept probability lies outside [0, 1]"), f"accept[{i}]", accept[i]
    total = residual.sum()
    if np.any(residual < -1e-12) or not (abs(total - 1) < 1e-9 or (rejected < 1e-12 and abs(total) < 1e-12)):
        return say("the residual is not a law (≥ 0, summing to 1)"), "Σ residual", total
    output = first.accepted_mass + first.reject_probability * (q * accept + rejected * residual)
    if not np.allclose(output, p, rtol=0, atol=1e-12):
        i = int(np.argmax(np.abs(output - p)))
        message = say("the tree's output does not follow the target's law")
        return message, f"P(output = {i}) = p({i}) = {p[i]:g}", output[i]
    idle = (q > 0) & (accept < 1 - 1e-12) & (residual > 1e-12)
    if idle.any():
        i = int(np.argmax(idle))
        return say("a token is turned away as a draft yet owed by the residual"), f"accept[{i}]", accept[i]
    return None


@value
def rejection_probability() -> float:
    return float(speculative.speculative_mass(*DRAFT_PAIR).reject_probability)


@cache
def simulated_tokens(alphas: tuple[float, ...], rounds: int = 40_000) -> tuple[float, float]:
    """(mean, standard error) of tokens per target call, from ``speculative.simulate`` at each draft position
    (target [α, 1 − α] against a draft that always proposes token 0): 1 + drafts kept before the first rejection."""
    kept, tokens = np.ones(rounds, dtype=bool), np.ones(rounds)
    for j, alpha in enumerate(alphas):
        kept &= speculative.simulate([alpha, 1.0 - alpha], [1.0, 0.0], rounds, seed=100 + j).accepted
        tokens += kept
    return float(tokens.mean()), float(tokens.std() / np.sqrt(rounds))


@properties()
def tokens_per_target_call(piece):
    """No draft: 1 token; drafts always kept: k + 1; equal rates: the page's closed form; any rates:
    the simulated sampler's mean (within 6 SE)."""
    closed_form = float(speculative.expected_tokens_per_target_call(0.7, 5))
    for alphas, want in (((), 1.0), ((1.0, 1.0, 1.0), 4.0), ((0.7,) * 5, closed_form)):
        got = number(call(piece, list(alphas)), say("tokens per call"))
        if not close(got, want, 1e-9):
            return failure(say("an exact case is off"), where=say("alphas = {alphas}", alphas=list(alphas)), got=got)
    for alphas in ((0.8, 0.8, 0.8), (0.9, 0.7, 0.5, 0.3), (0.6,), (0.95, 0.0, 0.9), (0.99,) * 8):
        (mean, error), got = simulated_tokens(alphas), number(call(piece, list(alphas)), say("tokens per call"))
        if not close(got, mean, 6 * error + 1e-12):
            text = "alphas = {alphas}: 40 000 simulated rounds, more than 6 standard errors away"
            where = say(text, alphas=list(alphas))
            return failure(say("the simulated sampler disagrees"), where=where, got=got)
    return None


@properties()
def break_even_draft_cost(piece):
    """Drafts never kept pay at no cost; at your cost c the simulated speedup tokens / (c·k + 1) is 1."""
    got = number(call(piece, 0.0, 3), say("the cost"))
    if not close(got, 0.0, 1e-12):
        return failure(say("drafts that are never kept cannot pay"), where=say("alpha = 0, k = 3"), got=got)
    for alpha, k in ((0.8, 4), (0.5, 3), (0.95, 8), (0.3, 1), (0.9, 2)):
        (mean, error), got = simulated_tokens((alpha,) * k), number(call(piece, alpha, k), say("the cost"))
        if not close(got * k + 1, mean, 6 * error + 1e-12):
            text = "alpha = {alpha}, k = {k}: 40 000 simulated rounds, more than 6 standard errors away"
            where = say(text, alpha=alpha, k=k)
            return failure(say("at your cost the speedup is not 1"), where=where, got=got)
    return None
