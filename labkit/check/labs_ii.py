"""The public checks of chapter 11's labs 07–08 (GRPO, KL): properties tested against the labs' own kernels
and samplers, no stored answer (lab 09: ``labs_ii_speculative``; pages 10–13: ``labs_ii_serving``).
"""

from functools import cache

import numpy as np

from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, as_array, call, failure
from labkit.labs import grpo, kl
from labkit.nn.attention import softmax


def number(value, name: str) -> float:
    """The reader's ``value`` as one finite or infinite real number (a NumPy scalar or 0-d array too)."""
    kind = type(value).__name__
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise CandidateProblem(say("{name} must be one number, got {kind}", name=name, kind=kind))
    try:
        return float(np.asarray(value, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        text = "{name} must be one number, got {kind} {value!r:.60}"
        raise CandidateProblem(say(text, name=name, kind=kind, value=value)) from None


def close(got: float, want: float, atol: float) -> bool:
    return bool(np.isfinite(got)) and abs(got - want) <= atol


# --- 07 GRPO -----------------------------------------------------------------------------------------


@properties()
def rloo_advantages(piece):
    """Invalid answers and groups of fewer than two valid answers get 0; each group's advantages sum to zero;
    raising one valid reward by d raises its own advantage by d and lowers each valid sibling's by d/(n − 1);
    nothing else moves."""
    ragged = np.random.default_rng(7).uniform(0.0, 1.0, size=(2, 5)).round(2)
    ragged_valid = np.array([[True, True, False, True, False], [False, True, True, True, True]])
    ragged[~ragged_valid] = np.nan
    lone, one_valid = np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]), np.array([[True, False], [True, True]])
    cases = [  # (case, rewards [G, K], valid [G, K]): a reward where valid is False is not one (it may be NaN)
        ("the lab's three groups, every answer valid", np.array(grpo.REWARDS), np.ones((3, 4), dtype=bool)),
        ("one success in eight, the last two answers cut off", lone, np.arange(8)[None, :] < 6),
        ("two groups of five, the invalid rewards NaN", ragged, ragged_valid),
        ("a group with one valid answer beside a full one", np.array([[3.0, -1.0], [2.0, 5.0]]), one_valid),
    ]
    for label, rewards, valid in cases:
        base = _advantages(piece, rewards, valid)
        if not np.isfinite(base).all():
            g, j = (int(v) for v in np.argwhere(~np.isfinite(base))[0])
            where = say("case “{label}”, advantage [{g}, {j}]", label=label, g=g, j=j)
            message = say("an advantage is NaN or infinite: an invalid reward reached a sum")
            return failure(message, where=where, got=base[g, j])
        silent = ~valid | (valid.sum(axis=-1, keepdims=True) < 2)
        if np.any(base[silent] != 0.0):
            g, j = (int(v) for v in np.argwhere(silent & (base != 0.0))[0])
            where = say("case “{label}”, advantage [{g}, {j}] (no baseline can judge it)", label=label, g=g, j=j)
            return failure(say("an answer without a baseline got an advantage"), where=where, got=base[g, j])
        sums = base.sum(axis=-1)
        if not np.allclose(sums, 0.0, rtol=0, atol=1e-9):
            g = int(np.flatnonzero(~np.isclose(sums, 0.0, rtol=0, atol=1e-9))[0])
            where = say("case “{label}”, group {g}", label=label, g=g)
            return failure(say("a group's advantages do not sum to zero"), where=where, got=sums[g])
        found = _moved_reward_problem(piece, label, rewards, valid, base)
        if found is not None:
            return found
    return None


def _advantages(piece, rewards, valid):
    return as_array(call(piece, rewards.copy(), valid.copy()), "advantages", rewards.shape, dtype_kind="number")


def _moved_reward_problem(piece, label, rewards, valid, base):
    """Raise each valid reward of every group with two valid answers or more, one at a time."""
    step = 0.5
    for g, i in np.argwhere(valid & (valid.sum(axis=-1, keepdims=True) >= 2)):
        moved = rewards.copy()
        moved[g, i] += step
        change = _advantages(piece, moved, valid) - base
        want = np.zeros_like(change)
        want[g, valid[g]] = -step / (valid[g].sum() - 1)
        want[g, i] = step
        bad = np.argwhere(~np.isclose(change, want, rtol=0, atol=1e-9))
        if bad.size:
            h, j = (int(v) for v in bad[0])
            text = "case “{label}”, reward [{g}, {i}] raised by {step}: the change of advantage [{h}, {j}]"
            where = say(text, label=label, g=g, i=i, step=step, h=h, j=j)
            return failure(say("a reward moves the advantages the wrong amount"), where=where, got=change[h, j])
    return None


@cache
def _uninformative_share(p: float, k: int, groups: int = 40_000) -> float:
    """Share of simulated groups (k answers, each right with probability p) whose GRPO advantages are all 0."""
    rewards = (np.random.default_rng(11).random((groups, k)) < p).astype(np.float64)
    return float(np.mean(np.all(grpo.group_advantages(rewards) == 0.0, axis=-1)))


@properties()
def informative_group_probability(piece):
    """No group of one answer, or of always-right or always-wrong answers, carries a signal; otherwise the
    probability agrees with groups sampled and run through ``grpo.group_advantages`` (within 6 SE)."""
    for p, k in ((0.0, 5), (1.0, 5), (0.4, 1)):
        got = number(call(piece, p, k), say("the probability"))
        if not close(got, 0.0, 1e-12):
            return failure(say("such a group never teaches anything"), where=say("p = {p}, k = {k}", p=p, k=k), got=got)
    for p, k in ((0.3, 4), (0.5, 8), (0.9, 16), (0.05, 3), (0.75, 2)):
        got, seen = number(call(piece, p, k), say("the probability")), 1.0 - _uninformative_share(p, k)
        if not close(got, seen, 6 * np.sqrt(max(seen * (1 - seen), 1e-6) / 40_000)):
            where = say("p = {p}, k = {k}: 40 000 sampled groups, more than 6 standard errors away", p=p, k=k)
            return failure(say("the sampled groups disagree with your probability"), where=where, got=got)
    return None


@value
def dual_clip_value() -> float:
    return float(grpo.dual_clip_objective(np.array([5.0]), np.array([-2.0]), 0.2, 3.0)[0])


# --- 08 KL ---------------------------------------------------------------------------------------------


@value
def finite_direction() -> str:
    return "pq" if np.isfinite(kl.kl_divergence([0.9, 0.1, 0.0], [0.5, 0.25, 0.25])) else "qp"


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
    cases = ((0.0, 1.0, 0.0, 1.0), (0.3, 0.7, -1.0, 1.5), (2.0, 3.0, 0.0, 0.8), (-1.0, 0.4, 1.0, 2.0), (5, 1, 5, 4))
    for case in cases:
        got, summed = number(call(piece, *case), "KL"), gaussian_kl_on_grid(*case)
        if not close(got, summed, 1e-7 * (1 + summed)):
            text = "μ_p = {case}, σ_p = {case2}, μ_q = {case3}, σ_q = {case4}"
            where = say(text, case=case[0], case2=case[1], case3=case[2], case4=case[3])
            return failure(say("the divergence summed on a grid disagrees"), where=where, got=got)
    return None


@properties()
def kl_from_logits(piece):
    """Finite, 0 for equal rows, blind to a constant added to either row, and its slope in z_q is
    softmax(z_q) − softmax(z_p) (central differences)."""
    cases = [
        ("seeded logits [8]", np.random.default_rng(8).normal(size=8), np.random.default_rng(9).normal(size=8)),
        ("logits in the thousands", np.array([1000.0, 990.0, 0.0]), np.array([995.0, 1000.0, 10.0])),
        ("a token z_q puts 800 below the other", np.array([0.0, 0.0]), np.array([0.0, -800.0])),
        ("six logits", np.random.default_rng(6).normal(0, 3, size=6), np.random.default_rng(60).normal(0, 3, size=6)),
    ]
    for label, z_p, z_q in cases:
        got = number(call(piece, z_p.copy(), z_q.copy()), "KL")
        if not np.isfinite(got) or got < -1e-12:
            message = say("KL between two rows of finite logits is finite and ≥ 0")
            return failure(message, where=say("case “{label}”", label=label), got=got)
        same = number(call(piece, z_p.copy(), z_p.copy()), "KL")
        if not close(same, 0.0, 1e-9):
            where = say("case “{label}”, z_q = z_p", label=label)
            return failure(say("a row against itself is 0"), where=where, got=same)
        shifted = number(call(piece, z_p + 5.0, z_q - 3.0), "KL")
        if not close(shifted, got, 1e-9 * (1 + abs(got))):
            where = say("case “{label}”, z_p + 5, z_q − 3", label=label)
            return failure(say("adding a constant to a row changed KL"), where=where, got=shifted)
        slope = softmax(z_q) - softmax(z_p)
        for j in range(z_q.size):
            step = np.zeros_like(z_q)
            step[j] = 1e-4
            up, down = (number(call(piece, z_p.copy(), z_q + s), "KL") for s in (step, -step))
            if not close((up - down) / 2e-4, slope[j], 1e-5):
                where = say("case “{label}”, ∂KL/∂z_q[{j}] by central differences", label=label, j=j)
                return failure(say("the slope of your KL in z_q is off"), where=where, got=(up - down) / 2e-4)
    return None
