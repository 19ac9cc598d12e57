"""The predictions, derivations and variants of chapter 11's labs (one entry per exercise: the
question, the run that answers it, the tolerance, the two hints).

Every answer comes from the labs' own kernels at check time; a variant's reference is written
here, hidden, because the kit does not contain it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import function, value

LABS = "notebooks/11-labs"


def _uniform_row() -> tuple[float, np.ndarray]:
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(np.zeros((1, 3)), np.array([0]), np.array([True]))


value(
    "uniform_row_loss",
    f"{LABS}/01-cross-entropy-gradient.md",
    "predict",
    "before computing: the loss of one row z = [0, 0, 0] with target 0, in nats (±0.005)",
    lambda: float(_uniform_row()[0]),
    tolerance=0.005,
    idea="equal logits mean a uniform prediction; cross-entropy is minus the log of the target's probability",
    rule="softmax of equal logits is 1/V for every token",
    why=lambda loss: f"softmax([0, 0, 0]) = [1/3, 1/3, 1/3], so L = −ln(1/3) = {loss:.4f}",
)

value(
    "uniform_row_gradient",
    f"{LABS}/01-cross-entropy-gradient.md",
    "derive",
    "by hand: ∂L/∂z for that row, as three numbers (±0.005 each)",
    lambda: [float(v) for v in _uniform_row()[1][0]],
    tolerance=0.005,
    idea="the gradient with respect to the logits compares the prediction with the one-hot target",
    rule="each component is (predicted probability − 1 if it is the target else 0), divided by the supervised rows",
    why=lambda g: f"[1/3 − 1, 1/3, 1/3] = [{g[0]:.4f}, {g[1]:.4f}, {g[2]:.4f}]: the components sum to zero",
)


def _sliding_window(document_ids, window):
    """Hidden reference: key j visible to query i iff same document and 0 ≤ i − j < window."""
    ids = np.asarray(document_ids)
    i, j = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (i - j >= 0) & (i - j < window)


function(
    "sliding_window_mask",
    f"{LABS}/02-masks-and-packing.md",
    "extend",
    "a mask the lab does not build: the document-causal mask of a packed row, limited to a sliding window — "
    "key j visible to query i iff both tokens are of one document and i − window < j ≤ i; bool [T, T]",
    ("document_ids", "window"),
    lambda: [
        ("two documents, window 2", (np.array([0, 0, 0, 1, 1]), 2)),
        ("one long document, window 3", (np.zeros(7, dtype=int), 3)),
        ("window 1: only itself", (np.array([4, 4, 5, 5, 5]), 1)),
        ("a window wider than the row", (np.array([0, 1, 1, 1, 2, 2]), 10)),
    ],
    _sliding_window,
    idea="a sliding window is a band below the diagonal, cut again at document borders",
    rule="the window counts the query itself: window w keeps w keys at most",
)


def _zero_prediction_entries() -> int:
    from labkit.labs.masks import packing_prediction_mask

    return int(np.sum(~packing_prediction_mask([0, 0, 1, 1, 1, 2, 2, 2])))


value(
    "packed_zero_predictions",
    f"{LABS}/02-masks-and-packing.md",
    "predict",
    "pack three documents of lengths 2, 3 and 3 into one row of eight: how many entries of the prediction "
    "mask are zero?",
    _zero_prediction_entries,
    idea="a prediction pairs a token with the next one; it only counts when both belong to the same document",
    rule="a row of T tokens has T − 1 predictions; one is lost at each border between documents",
    why=lambda n: f"7 predictions, {n} of them across a document border",
)


def _scaled_query_weight() -> float:
    from labkit.nn import attention

    q, k = np.array([[[10.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[2.0, 0.0], [0.0, 4.0]]])
    return float(attention(q, k, v, np.ones((1, 2), dtype=bool))[1][0, 0, 0])


value(
    "scaled_query_weight",
    f"{LABS}/03-causal-attention.md",
    "predict",
    "in the hand example, scale the query to q = [10, 0]: what is the first weight? (±0.01)",
    _scaled_query_weight,
    tolerance=0.01,
    idea="scaling a query scales every score: softmax sharpens towards the best-matching key",
    rule="the scores are q·k/√d_h; the weights are their softmax",
    why=lambda w: f"the scores become 10/√2 and 0, so the first weight is {w:.4f} — close to 1, not 1/2",
)


def _cache_length_after_steps() -> int:
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    model, tokens = lab_decoder(), lab_tokens()
    _, cache = model.prefill(tokens[None, :4])
    for position in range(4, 7):
        model.decode_step(tokens[None, position : position + 1], cache)
    return int(cache.length)


value(
    "cache_length_after_step_3",
    f"{LABS}/04-kv-cache-equivalence.md",
    "predict",
    "prefill the first four lab tokens in one call, then decode three more one at a time: how many "
    "positions does the cache hold after the third step?",
    _cache_length_after_steps,
    idea="every forward pass appends the keys and values of the tokens it was fed, prefill included",
    rule="the cache length is the number of tokens fed so far, not the number of decode steps",
    why=lambda n: f"four from the prefill and one per step: {n} positions",
)


def _lab_cache_bytes() -> int:
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    _, cache = lab_decoder().prefill(lab_tokens()[None, :])
    return int(sum(k.nbytes + v.nbytes for k, v in zip(cache.keys, cache.values, strict=True)))


value(
    "lab_cache_bytes",
    f"{LABS}/04-kv-cache-equivalence.md",
    "derive",
    "from the lab decoder's configuration: how many bytes do the keys and values of all seven lab tokens "
    "take, over every layer (float64)?",
    _lab_cache_bytes,
    idea="a cache holds a key and a value per layer, per KV head, per position, per head dimension",
    rule="bytes = 2 · layers · KV heads · positions · head_dim · bytes per number",
    why=lambda n: f"2 · 2 layers · 2 KV heads · 7 positions · 4 · 8 bytes = {n}",
)


def _dpo(beta_factor: float = 1.0):
    from labkit.labs import dpo

    return dpo.dpo_loss(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA * beta_factor)


value(
    "dpo_loss_when_beta_doubles",
    f"{LABS}/06-dpo.md",
    "predict",
    "keep the lab's pair and reference and double β: does the loss 'rise' or 'fall'?",
    lambda: "rises" if _dpo(2.0) > _dpo(1.0) else "falls",
    idea="β scales the margin inside the sigmoid: the sign of the margin decides which way the loss moves",
    rule="L = −log σ(β·m); a larger β pushes σ(β·m) towards 0 when m < 0 and towards 1 when m > 0",
    why=lambda way: f"the lab pair's margin has the sign that makes the loss {way} as β·m grows in size",
)


def _dpo_gradient_at_point() -> list[float]:
    from labkit.labs.dpo import dpo_gradient

    return [float(g) for g in dpo_gradient((-1.0, -2.0), (-1.5, -1.5), 0.5)]


value(
    "dpo_gradient_at_point",
    f"{LABS}/06-dpo.md",
    "derive",
    "by hand: ∂L/∂[π_w, π_l] for policy log-probabilities [−1, −2], reference [−1.5, −1.5], β = 0.5 (±0.001)",
    _dpo_gradient_at_point,
    tolerance=0.001,
    idea="DPO's gradient is the margin's gradient weighted by how wrong the policy still is",
    rule="∂L/∂m = −β·σ(−β·m) and m = (π_w − ρ_w) − (π_l − ρ_l): the two components are equal and opposite",
    why=lambda g: f"m = 1, β·m = 0.5: the gradient is [{g[0]:.4f}, {g[1]:.4f}]",
)


def _rloo(rewards):
    """Hidden reference: each answer's reward minus the mean reward of the rest of its group."""
    r = np.asarray(rewards, dtype=np.float64)
    k = r.shape[-1]
    return r - (r.sum(axis=-1, keepdims=True) - r) / (k - 1)


function(
    "rloo_advantages",
    f"{LABS}/07-grpo-and-ppo-clip.md",
    "extend",
    "a baseline the lab does not use: the leave-one-out (RLOO) advantage — each reward minus the mean "
    "reward of the *other* answers of its group; rewards [G, K] → [G, K]",
    ("rewards",),
    lambda: [
        ("the lab's three groups", (np.array([[0.0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0]]),)),
        ("one success in eight", (np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]),)),
        ("two answers", (np.array([[3.0, -1.0]]),)),
    ],
    _rloo,
    idea="a baseline should not contain the answer it judges",
    rule="the other K − 1 answers' mean: the group's sum minus this reward, over K − 1",
)


def _lone_success() -> float:
    from labkit.labs.grpo import group_advantages

    return float(group_advantages(np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]), ddof=0, eps=0.0)[0, 0])


value(
    "lone_success_advantage",
    f"{LABS}/07-grpo-and-ppo-clip.md",
    "derive",
    "the group 1 0 0 0 0 0 0 0 with ε = 0 and the population standard deviation: the correct answer's "
    "advantage (±0.005)",
    _lone_success,
    tolerance=0.005,
    idea="a GRPO advantage says how much better one answer is than the others of its own group",
    rule="(r − mean) / std, with mean 1/8 and the population std √(1/8 · 7/8)",
    why=lambda a: f"(1 − 1/8) / √(7/64) = √7 ≈ {a:.4f}",
)


def _dual_clip_at_five() -> float:
    from labkit.labs.grpo import dual_clip_objective

    return float(dual_clip_objective(np.array([5.0]), np.array([-2.0]), 0.2, 3.0)[0])


value(
    "dual_clip_value",
    f"{LABS}/07-grpo-and-ppo-clip.md",
    "predict",
    "for Â = −2, ε = 0.2 and dual-clip c = 3: what is J at ρ = 5? (±0.01)",
    _dual_clip_at_five,
    tolerance=0.01,
    idea="with a negative advantage the ordinary clip cannot bound a huge ratio; the dual clip does",
    rule="for Â < 0, J = max(min(ρÂ, clip(ρ)Â), c·Â)",
    why=lambda j: f"ρÂ = −10 is below c·Â = −6, so the dual clip holds J at {j:g}",
)


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
    rule="E = 1 + α + α² + … + α^k, a geometric sum",
    why=lambda e: f"1 + 0.5 + 0.25 + 0.125 = {e:g}",
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
