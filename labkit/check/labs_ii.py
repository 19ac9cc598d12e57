"""The exercises of chapter 11's labs 08–13 that need no runtime hook: predictions, derivations and
variants.

Every answer comes from the labs' own kernels at check time; a variant's reference is written
here, hidden, because the kit does not contain it.
"""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace

import numpy as np

from labkit.check.core import function, value
from labkit.check.grading import as_array, call, unpack

LABS = "notebooks/11-labs"
KL = f"{LABS}/08-kl-divergence.md"
SPECULATIVE = f"{LABS}/09-speculative-sampling.md"
BANDWIDTH = f"{LABS}/10-bandwidth-budget.md"
RANKS = f"{LABS}/11-unequal-rank-gradients.md"
MEASURING = f"{LABS}/13-measuring-the-book.md"

#: the distributions of the KL and speculative pages' hand questions: (p, q)
KL_PAIR = ([0.9, 0.1, 0.0], [0.5, 0.25, 0.25])
DRAFT_PAIR = ([0.5, 0.5, 0.0], [0.2, 0.3, 0.5])


@value(KL, "derive", tolerance=0.001)
def kl_by_hand() -> float:
    """p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]: KL(p ‖ q) in nats, by hand (±0.001)

    idea: KL(p ‖ q) is an expectation under p: outcomes p never produces do not count
    rule: Σ p(x)·ln(p(x)/q(x)) over the outcomes with p(x) > 0
    why: 0.9·ln 1.8 + 0.1·ln 0.4 = {answer:.4f}; the third outcome adds nothing
    """
    from labkit.labs.kl import kl_divergence

    return float(kl_divergence(*KL_PAIR))


@value(KL, "predict")
def finite_direction() -> str:
    """p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]: which direction is finite — 'pq' for KL(p ‖ q) or 'qp' for
    KL(q ‖ p)?

    idea: a KL divergence is infinite when the second distribution rules out an outcome the first produces
    rule: look for an outcome with probability zero, and ask under which distribution the expectation is taken
    why: only the direction '{answer}' is finite: the other weighs an outcome of probability zero
    """
    from labkit.labs.kl import kl_divergence

    return "pq" if np.isfinite(kl_divergence(*KL_PAIR)) else "qp"


def _logit_pairs():
    return [
        ("seeded logits [8]", (np.random.default_rng(8).normal(size=8), np.random.default_rng(9).normal(size=8))),
        ("equal rows", (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))),
        ("a shifted row: the same distribution", (np.array([0.0, 1.0]), np.array([100.0, 101.0]))),
        ("logits in the thousands", (np.array([1000.0, 990.0, 0.0]), np.array([995.0, 1000.0, 10.0]))),
    ]


@function(KL, "extend", _logit_pairs, atol=1e-9)
def kl_from_logits(z_p, z_q):
    """what trainers compute: KL(softmax(z_p) ‖ softmax(z_q)) in nats from two rows of logits [V], exact for
    logits in the thousands

    idea: work in log-probabilities: subtracting the row's maximum changes nothing and keeps exp finite
    rule: log softmax(z) = z − max z − log Σ exp(z − max z); KL = Σ p·(log p − log q)
    """
    lp, lq = (z - np.max(z) - np.log(np.sum(np.exp(z - np.max(z)))) for z in (z_p, z_q))  # log-softmax, no overflow
    return float(np.sum(np.exp(lp) * (lp - lq)))


def _draft_pairs():
    from labkit.labs import speculative

    (_, equal_p, equal_q), (_, disjoint_p, disjoint_q) = speculative.EDGE_CASES
    pairs = {
        "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]": (speculative.TARGET, speculative.DRAFT),
        "draft equal to target": (equal_p, equal_q),
        "disjoint support: p = [0, 0.7, 0.3], q = [0.3, 0.7, 0]": (disjoint_p, disjoint_q),
        "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]": DRAFT_PAIR,
        "six tokens, zeros on both sides": ((0.3, 0.25, 0.0, 0.2, 0.15, 0.1), (0.1, 0.25, 0.3, 0.35, 0.0, 0.0)),
    }
    return [(case, (np.array(p), np.array(q))) for case, (p, q) in pairs.items()]


def _unused_accept_ignored(candidate):
    """α where the draft never proposes (q = 0) is never used, so it is not checked."""

    def piece(p, q):
        accept, residual = unpack(call(candidate, p.copy(), q.copy()), ("accept", "residual"))
        return np.where(q > 0, as_array(accept, "accept", p.shape, dtype_kind="number"), 0.0), residual

    return piece


def _verification(p, q):
    """(accept, residual) of the target p verifying a draft from q, accept 0 where q never proposes."""
    from labkit.labs.speculative import speculative_mass

    mass = speculative_mass(p, q)
    return np.where(q > 0, mass.accept_probability, 0.0), mass.residual


_TWO_PARTS = {"outputs": ("accept", "residual"), "hook": _unused_accept_ignored}


@function(SPECULATIVE, "extend", _draft_pairs, **_TWO_PARTS)
def speculative_parts(p, q):
    """return (accept [V], residual [V]) for target p and draft q [V]: accept = min(1, p/q) (where q = 0 it
    is never used and not checked), residual = max(p − q, 0) / Σ max(p − q, 0), all zeros when p = q

    idea: speculative sampling keeps the target's distribution: the target verifies the draft, and rejected
    mass is redistributed where the target wanted more
    rule: the target verifies the draft, so the ratio is target over draft, and a probability never exceeds
    1; the residual is a distribution over where the target wanted more — and when nothing is rejected,
    there is nothing to normalise
    """
    return _verification(p, q)


def _rejecting_pairs():
    """The pairs where the first draft can be rejected (p ≠ q): the second draft is then reached."""
    return [(case, args) for case, args in _draft_pairs() if case != "draft equal to target"]


@function(SPECULATIVE, "extend", _rejecting_pairs, **_TWO_PARTS)
def second_draft(p, q):
    """a tree of two drafts, both drawn from q: when the target rejects the first, the second is verified.
    Return (accept [V], residual [V]) of that second verification — the probability that the second draft x
    is kept (where q = 0 it is not checked) and the law drawn from when it is rejected too (all zeros if it
    never is)

    idea: after a rejection the token still owed is not drawn from p any more: the second draft must be
    judged against what the target wants given that the first was rejected
    rule: once the first draft is rejected, the output must follow the first residual, so that law plays the
    target's part for the second draft, while the draft law stays q; its own leftover mass gives the last
    residual
    """
    return _verification(_verification(p, q)[1], q)


def _draft_mass():
    from labkit.labs.speculative import speculative_mass

    return speculative_mass(*DRAFT_PAIR)


@value(SPECULATIVE, "predict", tolerance=0.005)
def rejection_probability() -> float:
    """p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]: the probability β that the target rejects a draft (±0.005)

    idea: a draft x is kept with probability min(1, p(x)/q(x)): the rejected mass is where q exceeds p
    rule: β = 1 − Σ min(p, q)
    why: Σ min(p, q) = 0.2 + 0.3 + 0 = 0.5, so β = {answer:g}
    """
    return float(_draft_mass().reject_probability)


@value(SPECULATIVE, "derive", tolerance=0.005)
def tokens_per_target_call() -> float:
    """with that pair's acceptance rate α = 1 − β and k = 3 drafts: the expected tokens per target call
    (±0.005)

    idea: each draft survives with probability α until the first rejection, and the target always adds one
    token
    rule: count the tokens of a call: the accepted drafts up to the first rejection, plus the target's own
    why: 1 + 0.5 + 0.25 + 0.125 = {answer:g}
    """
    from labkit.labs.speculative import expected_tokens_per_target_call

    return float(expected_tokens_per_target_call(1.0 - _draft_mass().reject_probability, 3))


@value(SPECULATIVE, "derive", tolerance=0.005)
def tokens_at_general_alpha() -> float:
    """any pair whose drafts are accepted with α = 0.8, and k = 4 drafts: the expected tokens per target
    call, from the closed form you derive for a general α and k (±0.005)

    idea: the tokens of a call are 1 plus the drafts accepted before the first rejection: sum the chance of
    each
    rule: draft j is kept only if drafts 1 … j all were; the target's own token comes with every call; the
    sum of those chances is a finite geometric series, and it never exceeds 1 / (1 − α) however large k grows
    why: E = (1 − α^(k+1)) / (1 − α) = (1 − 0.8⁵) / 0.2 = {answer:.4f}
    """
    from labkit.labs.speculative import expected_tokens_per_target_call

    return float(expected_tokens_per_target_call(0.8, 4))


def _layouts():
    from labkit.labs.bandwidth import DecodeBudget

    small = {"n_params": 1_500_000_000, "n_layers": 28, "context": 32_768, "n_kv_heads": 2}
    layouts = {
        "the source's 7B fp16 layout, batch 1": (DecodeBudget(), 1),
        "the source's 7B fp16 layout, batch 8": (DecodeBudget(), 8),
        "one byte per weight and per cache element, batch 8": (
            DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1),
            8,
        ),
        "32 KV heads instead of 8, batch 8": (DecodeBudget(n_kv_heads=32), 8),
        "a 1.5B model, 28 layers, 2 KV heads, 32 768 tokens, 2 TB/s, batch 64": (
            DecodeBudget(**small, bandwidth_bytes_per_second=2_000_000_000_000),
            64,
        ),
    }
    return [(case, (SimpleNamespace(**asdict(budget)), batch)) for case, (budget, batch) in layouts.items()]


@function(BANDWIDTH, "extend", _layouts, atol=1e-9, outputs=("lower_bound_ms",))
def decode_step_lower_bound_ms(budget, batch):
    """return the streaming-read lower bound of one decode step in milliseconds for a layout handed over as
    numbers (budget has the fields of labkit.labs.bandwidth.DecodeBudget: n_params, bytes_per_param,
    n_layers, context, n_kv_heads, head_dim, kv_bytes_per_element, bandwidth_bytes_per_second), batch ≥ 1

    idea: a decode step has to stream every byte it reads through memory once: count the bytes, then divide
    by the bandwidth
    rule: the weights are read once per step whatever the batch, each request's cache once per request, and
    a cache holds keys and values; bytes over bytes per second is seconds
    """
    from labkit.labs.bandwidth import DecodeBudget

    return DecodeBudget(**vars(budget)).step(batch)["lower_bound_ms"]  # the lab's own bound for that layout


@value(BANDWIDTH, "predict", tolerance=0.02, relative=True)
def quantised_batch8_ms() -> float:
    """the 7B layout with one-byte weights and a one-byte cache, at batch 8: the lower bound of one decode
    step in ms (±2 %)

    idea: a decode step streams every weight once and every request's cache once
    rule: bytes = weights + batch · cache per request; time = bytes / bandwidth
    why: 7 GB of weights + 8 · 0.5 GB of cache = 11 GB at 1 TB/s: {answer:.4g} ms
    """
    from labkit.labs.bandwidth import DecodeBudget

    return float(DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1).step(8)["lower_bound_ms"])


#: (case, options of unequal_rank.run): the sums and counts handed over come from the lab's own run
RANK_CASES = (
    ("the lab's ranks: two tokens of target 1, six of target 0, w = 0", {}),
    (
        "one target-1 token moved to rank 1: ranks [1] and [1, 0, 0, 0, 0, 0, 0]",
        {"rank_targets": ((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))},
    ),
    ("the lab's ranks at w = 1.3", {"w": 1.3}),
    ("equal token counts (three each)", {"rank_targets": ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))}),
    (
        "three ranks of 1, 4 and 7 tokens",
        {"rank_targets": ((1.0,), (0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))},
    ),
)


def _rank_sums():
    from labkit.labs import unequal_rank

    reports = [(case, unequal_rank.run(**options)) for case, options in RANK_CASES]
    return [(case, (np.array(r["rank_gradient_sums"]), np.array(r["rank_token_counts"]))) for case, r in reports]


@function(RANKS, "extend", _rank_sums, outputs=("local_gradients",))
def compensated_local_gradients(rank_gradient_sums, rank_token_counts):
    """return [R] the gradient each rank hands to the averaging all-reduce, so that their mean is the global
    token mean (rank_gradient_sums S [R] float, rank_token_counts n [R] int)

    idea: the all-reduce averages over ranks, but the loss averages over tokens; ranks hold different
    numbers of tokens
    rule: the all-reduce divides by the number of ranks, the loss by the number of tokens; each rank may only
    use its own sum and the two totals
    """
    return rank_gradient_sums * rank_gradient_sums.size / rank_token_counts.sum()  # each rank rescales its sum


@value(RANKS, "predict", tolerance=0.001)
def moved_token_naive_average() -> float:
    """move one target-1 token from rank 0 to rank 1 (rank 0: [1], rank 1: [1, 0, 0, 0, 0, 0, 0]) at w = 0:
    the naive average of the ranks' mean gradients (±0.001)

    idea: the all-reduce averages over ranks, but the loss averages over tokens; ranks hold different
    numbers of tokens
    rule: each rank's mean is Σ(p − y)/n_r with p = σ(0) = 1/2; the naive average weighs both ranks equally
    why: rank means −0.5 and 2.5/7; their plain mean is {answer:.4f}, while the token mean is 0.25
    """
    from labkit.labs import unequal_rank

    return float(unequal_rank.run(rank_targets=RANK_CASES[1][1]["rank_targets"])["naive_average"])


def _curves() -> list[tuple[str, tuple[list[int], list[float]]]]:
    """Exact power laws k = 0, 1, 2 and a deterministically wobbled T^1.5: (label, (T, t in ms))."""
    contexts = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = np.array(contexts, dtype=float)
    wobble = 1.0 + 0.1 * np.sin(np.arange(len(contexts)))  # deterministic "noise"
    curves = {
        "a flat curve t = 0.2 ms": [0.2] * len(contexts),
        "a linear curve t = 0.003·T": list(0.003 * t),
        "a quadratic curve t = 5e-5·T²": list(5e-5 * t**2),
        "a noisy T^1.5 curve": list(1e-3 * t**1.5 * wobble),
    }
    return [(label, (contexts, times)) for label, times in curves.items()]


@function(MEASURING, "extend", _curves, atol=1e-6, outputs=("k",))
def growth_exponent(contexts, times_ms):
    """return k in t ≈ c·T^k, fitted by least squares on (log T, log t)

    idea: a power law is a straight line once both axes are logarithmic
    rule: the exponent is a slope after taking the same logarithm of both axes — not the slope in ms per
    token, and not the intercept
    """
    x, y = np.log(np.asarray(contexts, float)), np.log(np.asarray(times_ms, float))
    design = np.stack([np.ones_like(x), x], axis=1)  # [n, 2]: intercept, slope
    (_, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(slope)


@value(MEASURING, "predict", tolerance=0.01)
def doubling_factor() -> float:
    """a cost that grows with k = 2 (t ≈ c·T²): by what factor does the time grow when the context doubles?

    idea: a power law is a straight line once both axes are logarithmic
    rule: t(2T)/t(T) = 2^k, whatever c is
    why: 2² = {answer:g}: the constant c cancels
    """
    contexts = [64, 128, 256, 512]
    return float(2.0 ** growth_exponent.reference(contexts, [3e-6 * t**2 for t in contexts]))
