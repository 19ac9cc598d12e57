"""The predictions, derivations and variants of chapter 11's labs 01–07 (one entry per exercise: the
question, the run that answers it, the tolerance, the two hints).

Every answer comes from the labs' own kernels at check time; a variant's reference is written
here, hidden, because the kit does not contain it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.grading import function, value

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
    rule="differentiate −log softmax(z)[target] for each logit: the target and the other entries differ in sign",
    why=lambda g: f"[1/3 − 1, 1/3, 1/3] = [{g[0]:.4f}, {g[1]:.4f}, {g[2]:.4f}]: the components sum to zero",
)


def faulty_log_softmax(z):
    """log softmax(z) over the last axis — with a fault: find the first divergence, then fix it."""
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def _log_softmax(z):
    """Hidden reference: the shift applied on both sides of the subtraction."""
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


function(
    "fixed_log_softmax",
    f"{LABS}/01-cross-entropy-gradient.md",
    "diagnose",
    "labkit.check.labs.faulty_log_softmax passes some rows and fails others: find the first row where it "
    "diverges, name the suspect line, and hand in the fixed function (z [N, V] → log softmax over V)",
    ("z",),
    lambda: [
        ("a row whose largest logit is 0", (np.array([[0.0, -1.0, -2.0]]),)),
        ("the lab's row z = [ln 2, 0, 0]", (np.array([[np.log(2.0), 0.0, 0.0]]),)),
        ("logits in the thousands", (np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]),)),
    ],
    _log_softmax,
    idea="subtracting the row's maximum changes nothing — provided it is subtracted everywhere the logits appear",
    rule="the first divergence is on a row whose maximum is not 0: compare what each side of the subtraction was "
    "computed from",
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
    rule="differentiate −log σ(β·m) through the margin m, which moves with π_w and against π_l",
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
    rule="standardise within the group: subtract its mean, divide by its population standard deviation",
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
