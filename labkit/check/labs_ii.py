"""The predictions, derivations and variants of chapter 11's labs 08–13 (one entry per exercise: the
question, the run that answers it, the tolerance, the two hints).

Every answer comes from the labs' own kernels at check time; a variant's reference is written
here, hidden, because the kit does not contain it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.grading import function, value

LABS = "notebooks/11-labs"


def _kl_by_hand() -> float:
    from labkit.labs.kl import kl_divergence

    return float(kl_divergence([0.9, 0.1, 0.0], [0.5, 0.25, 0.25]))


value(
    "kl_by_hand",
    f"{LABS}/08-kl-divergence.md",
    "derive",
    "p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]: KL(p ‖ q) in nats, by hand (±0.001)",
    _kl_by_hand,
    tolerance=0.001,
    idea="KL(p ‖ q) is an expectation under p: outcomes p never produces do not count",
    rule="Σ p(x)·ln(p(x)/q(x)) over the outcomes with p(x) > 0",
    why=lambda d: f"0.9·ln 1.8 + 0.1·ln 0.4 = {d:.4f}; the third outcome adds nothing",
)


def _finite_direction() -> str:
    from labkit.labs.kl import kl_divergence

    p, q = [0.9, 0.1, 0.0], [0.5, 0.25, 0.25]
    return "pq" if np.isfinite(kl_divergence(p, q)) else "qp"


value(
    "finite_direction",
    f"{LABS}/08-kl-divergence.md",
    "predict",
    "p = [0.9, 0.1, 0], q = [0.5, 0.25, 0.25]: which direction is finite — 'pq' for KL(p ‖ q) or 'qp' for KL(q ‖ p)?",
    _finite_direction,
    idea="a KL divergence is infinite when the second distribution rules out an outcome the first produces",
    rule="look for an outcome with probability zero, and ask under which distribution the expectation is taken",
    why=lambda d: (
        f"only {'KL(p ‖ q)' if d == 'pq' else 'KL(q ‖ p)'} is finite: the other weighs an outcome of probability zero"
    ),
)


def _kl_from_logits(z_p, z_q):
    """Hidden reference: KL(softmax(z_p) ‖ softmax(z_q)) through log-softmax (no overflow)."""
    lp = z_p - np.max(z_p) - np.log(np.sum(np.exp(z_p - np.max(z_p))))
    lq = z_q - np.max(z_q) - np.log(np.sum(np.exp(z_q - np.max(z_q))))
    return float(np.sum(np.exp(lp) * (lp - lq)))


function(
    "kl_from_logits",
    f"{LABS}/08-kl-divergence.md",
    "extend",
    "what trainers compute: KL(softmax(z_p) ‖ softmax(z_q)) in nats from two rows of logits [V], exact for "
    "logits in the thousands",
    ("z_p", "z_q"),
    lambda: [
        ("seeded logits [8]", (np.random.default_rng(8).normal(size=8), np.random.default_rng(9).normal(size=8))),
        ("equal rows", (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))),
        ("a shifted row: the same distribution", (np.array([0.0, 1.0]), np.array([100.0, 101.0]))),
        ("logits in the thousands", (np.array([1000.0, 990.0, 0.0]), np.array([995.0, 1000.0, 10.0]))),
    ],
    _kl_from_logits,
    atol=1e-9,
    idea="work in log-probabilities: subtracting the row's maximum changes nothing and keeps exp finite",
    rule="log softmax(z) = z − max z − log Σ exp(z − max z); KL = Σ p·(log p − log q)",
)


def _page_pair():
    from labkit.labs.speculative import speculative_mass

    return speculative_mass([0.5, 0.5, 0.0], [0.2, 0.3, 0.5])


value(
    "rejection_probability",
    f"{LABS}/09-speculative-sampling.md",
    "predict",
    "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]: the probability β that the target rejects a draft (±0.005)",
    lambda: float(_page_pair().reject_probability),
    tolerance=0.005,
    idea="a draft x is kept with probability min(1, p(x)/q(x)): the rejected mass is where q exceeds p",
    rule="β = 1 − Σ min(p, q)",
    why=lambda b: f"Σ min(p, q) = 0.2 + 0.3 + 0 = 0.5, so β = {b:g}",
)


def _tokens_per_call() -> float:
    from labkit.labs.speculative import expected_tokens_per_target_call

    return float(expected_tokens_per_target_call(1.0 - _page_pair().reject_probability, 3))


value(
    "tokens_per_target_call",
    f"{LABS}/09-speculative-sampling.md",
    "derive",
    "with that pair's acceptance rate α = 1 − β and k = 3 drafts: the expected tokens per target call (±0.005)",
    _tokens_per_call,
    tolerance=0.005,
    idea="each draft survives with probability α until the first rejection, and the target always adds one token",
    rule="count the tokens of a call: the accepted drafts up to the first rejection, plus the target's own",
    why=lambda e: f"1 + 0.5 + 0.25 + 0.125 = {e:g}",
)


def _general_tokens() -> float:
    from labkit.labs.speculative import expected_tokens_per_target_call

    return float(expected_tokens_per_target_call(0.8, 4))


value(
    "tokens_at_general_alpha",
    f"{LABS}/09-speculative-sampling.md",
    "derive",
    "any pair whose drafts are accepted with α = 0.8, and k = 4 drafts: the expected tokens per target call, "
    "from the closed form you derive for a general α and k (±0.005)",
    _general_tokens,
    tolerance=0.005,
    idea="the tokens of a call are 1 plus the drafts accepted before the first rejection: sum the chance of each",
    rule="draft j is kept only if drafts 1 … j all were; the target's own token comes with every call; the sum of "
    "those chances is a finite geometric series, and it never exceeds 1 / (1 − α) however large k grows",
    why=lambda e: f"E = (1 − α^(k+1)) / (1 − α) = (1 − 0.8⁵) / 0.2 = {e:.4f}",
)


def _quantised_ms() -> float:
    from labkit.labs.bandwidth import DecodeBudget

    return float(DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1).step(8)["lower_bound_ms"])


value(
    "quantised_batch8_ms",
    f"{LABS}/10-bandwidth-budget.md",
    "predict",
    "the 7B layout with one-byte weights and a one-byte cache, at batch 8: the lower bound of one decode step "
    "in ms (±2 %)",
    _quantised_ms,
    tolerance=0.02,
    relative=True,
    idea="a decode step streams every weight once and every request's cache once",
    rule="bytes = weights + batch · cache per request; time = bytes / bandwidth",
    why=lambda ms: f"7 GB of weights + 8 · 0.5 GB of cache = 11 GB at 1 TB/s: {ms:.4g} ms",
)


value(
    "moved_token_naive_average",
    f"{LABS}/11-unequal-rank-gradients.md",
    "predict",
    "move one target-1 token from rank 0 to rank 1 (rank 0: [1], rank 1: [1, 0, 0, 0, 0, 0, 0]) at w = 0: "
    "the naive average of the ranks' mean gradients (±0.001)",
    lambda: float(
        __import__("labkit.labs.unequal_rank", fromlist=["run"]).run(
            rank_targets=((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        )["naive_average"]
    ),
    tolerance=0.001,
    idea=(
        "the all-reduce averages over ranks, but the loss averages over tokens; ranks hold different numbers of tokens"
    ),
    rule="each rank's mean is Σ(p − y)/n_r with p = σ(0) = 1/2; the naive average weighs both ranks equally",
    why=lambda a: f"rank means −0.5 and 2.5/7; their plain mean is {a:.4f}, while the token mean is 0.25",
)


def _doubling_factor() -> float:
    from labkit.check.measuring import reference_exponent

    contexts = [64, 128, 256, 512]
    return float(2.0 ** reference_exponent(contexts, [3e-6 * t**2 for t in contexts]))


value(
    "doubling_factor",
    f"{LABS}/13-measuring-the-book.md",
    "predict",
    "a cost that grows with k = 2 (t ≈ c·T²): by what factor does the time grow when the context doubles?",
    _doubling_factor,
    tolerance=0.01,
    idea="a power law is a straight line once both axes are logarithmic",
    rule="t(2T)/t(T) = 2^k, whatever c is",
    why=lambda f: f"2² = {f:g}: the constant c cancels",
)
