"""The exercises of chapter 11's labs 01–07 that need no runtime hook: predictions, derivations,
variants and a diagnosis.

Every answer comes from the labs' own kernels at check time; a variant's reference is written
here, hidden, because the kit does not contain it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import function, value

LABS = "notebooks/11-labs"
CE = f"{LABS}/01-cross-entropy-gradient.md"
GRPO = f"{LABS}/07-grpo-and-ppo-clip.md"


def _uniform_row() -> tuple[float, np.ndarray]:
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(np.zeros((1, 3)), np.array([0]), np.array([True]))


@value(CE, "predict", tolerance=0.005)
def uniform_row_loss() -> float:
    """before computing: the loss of one row z = [0, 0, 0] with target 0, in nats (±0.005)

    idea: equal logits mean a uniform prediction; cross-entropy is minus the log of the target's probability
    rule: softmax of equal logits is 1/V for every token
    why: softmax([0, 0, 0]) = [1/3, 1/3, 1/3], so L = −ln(1/3) = {answer:.4f}
    """
    return float(_uniform_row()[0])


@value(CE, "derive", tolerance=0.005)
def uniform_row_gradient() -> list[float]:
    """by hand: ∂L/∂z for that row, as three numbers (±0.005 each)

    idea: the gradient with respect to the logits compares the prediction with the one-hot target
    rule: differentiate −log softmax(z)[target] for each logit: the target and the other entries differ in sign
    why: [1/3 − 1, 1/3, 1/3] = [{answer[0]:.4f}, {answer[1]:.4f}, {answer[2]:.4f}]: the components sum to zero
    """
    return [float(v) for v in _uniform_row()[1][0]]


def _ce_cases():
    from labkit.labs import masks

    seeded = np.random.default_rng(masks.MASKED_SEED).normal(size=(3, 4))
    many = np.random.default_rng(2026).normal(0.0, 2.0, size=(5, 6))
    lab_row = np.array([[np.log(2.0), 0.0, 0.0]])
    thousands = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]])
    return [
        ("the lab's row z = [ln 2, 0, 0], target 2", (lab_row, np.array([2]), np.array([True]))),
        (
            "the seeded [3, 4] batch, row 1 left out of the loss",
            (seeded, np.array(masks.MASKED_TARGETS), np.array(masks.MASKED_VALID)),
        ),
        ("logits in the thousands", (thousands, np.array([0, 2]), np.array([True, True]))),
        (
            "a [5, 6] batch with only rows 1 and 4 supervised",
            (many, np.array([0, 5, 2, 3, 1]), np.array([False, True, False, False, True])),
        ),
    ]


@function(CE, "derive", _ce_cases, outputs=("gradient",))
def masked_ce_gradient(logits, targets, valid):
    """derive and return ∂L/∂logits [N, V] of the mean cross-entropy over the supervised rows (logits
    [N, V] float, targets [N] int, valid [N] bool); the page shows the loss, not its gradient

    idea: the gradient of cross-entropy with respect to the logits compares what the model predicts with
    what was right, and only supervised rows count
    rule: the mean runs over the supervised rows only; a row the mask leaves out has no gradient at all; exp
    of a logit in the thousands overflows unless the row is shifted first
    """
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(logits, targets, valid)[1]


def faulty_log_softmax(z):
    """log softmax(z) over the last axis — with a fault: find the first divergence, then fix it."""
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def _log_softmax_cases():
    return [
        ("a row whose largest logit is 0", (np.array([[0.0, -1.0, -2.0]]),)),
        ("the lab's row z = [ln 2, 0, 0]", (np.array([[np.log(2.0), 0.0, 0.0]]),)),
        ("logits in the thousands", (np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]),)),
    ]


@function(CE, "diagnose", _log_softmax_cases)
def fixed_log_softmax(z):
    """labkit.check.labs.faulty_log_softmax passes some rows and fails others: find the first row where it
    diverges, name the suspect line, and hand in the fixed function (z [N, V] → log softmax over V)

    idea: subtracting the row's maximum changes nothing — provided it is subtracted everywhere the logits
    appear
    rule: the first divergence is on a row whose maximum is not 0: compare what each side of the subtraction
    was computed from
    """
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))  # the shift on both sides


def _window_cases():
    return [
        ("two documents, window 2", (np.array([0, 0, 0, 1, 1]), 2)),
        ("one long document, window 3", (np.zeros(7, dtype=int), 3)),
        ("window 1: only itself", (np.array([4, 4, 5, 5, 5]), 1)),
        ("a window wider than the row", (np.array([0, 1, 1, 1, 2, 2]), 10)),
    ]


@function(f"{LABS}/02-masks-and-packing.md", "extend", _window_cases)
def sliding_window_mask(document_ids, window):
    """a mask the lab does not build: the document-causal mask of a packed row, limited to a sliding window
    — key j visible to query i iff both tokens are of one document and i − window < j ≤ i; bool [T, T]

    idea: a sliding window is a band below the diagonal, cut again at document borders
    rule: the window counts the query itself: window w keeps w keys at most
    """
    ids = np.asarray(document_ids)
    i, j = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (i - j >= 0) & (i - j < window)


@value(f"{LABS}/02-masks-and-packing.md", "predict")
def packed_zero_predictions() -> int:
    """pack three documents of lengths 2, 3 and 3 into one row of eight: how many entries of the prediction
    mask are zero?

    idea: a prediction pairs a token with the next one; it only counts when both belong to the same document
    rule: a row of T tokens has T − 1 predictions; one is lost at each border between documents
    why: 7 predictions, {answer} of them across a document border
    """
    from labkit.labs.masks import packing_prediction_mask

    return int(np.sum(~packing_prediction_mask([0, 0, 1, 1, 1, 2, 2, 2])))


def _attention_cases():
    from labkit.labs.causal_attention import PERTURB_FROM, PREFIX_SEED

    x = np.random.default_rng(PREFIX_SEED).normal(size=(1, 5, 4))[0]
    pushed = x.copy()
    pushed[PERTURB_FROM:] += 100.0
    other = np.random.default_rng(5).normal(0.0, 1.5, size=(3, 6, 8))
    hand = (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 4.0]]))
    return [
        ("the hand example as row 1 of two tokens", hand),
        ("the lab's seeded five tokens (q = k = v = x)", (x, x, x)),
        (f"the same five tokens, positions ≥ {PERTURB_FROM} pushed by +100", (pushed, pushed, pushed)),
        ("six tokens with d_h = 8 and separate q, k, v", tuple(other)),
    ]


@function(f"{LABS}/03-causal-attention.md", "extend", _attention_cases, outputs=("output", "weights"), first="weights")
def causal_self_attention(q, k, v):
    """one head of causal self-attention over [T, d_h] arrays: q, k, v → (output [T, d_h], weights [T, T]),
    key j visible to query i only when j ≤ i (the page's kernel is batched and takes a mask; this one builds
    it)

    idea: causal attention: each position weighs only the past and itself, and the weights of a row are a
    probability distribution
    rule: a future key must be removed before the softmax, not after; the scores shrink with the head size;
    the output row averages the value rows with that query's weights
    """
    from labkit.nn.attention import attention

    t = q.shape[0]
    output, weights = attention(q[None], k[None], v[None], np.tril(np.ones((t, t), dtype=bool)))
    return output[0], weights[0]


@value(f"{LABS}/03-causal-attention.md", "predict", tolerance=0.01)
def scaled_query_weight() -> float:
    """in the hand example, scale the query to q = [10, 0]: what is the first weight? (±0.01)

    idea: scaling a query scales every score: softmax sharpens towards the best-matching key
    rule: the scores are q·k/√d_h; the weights are their softmax
    why: the scores become 10/√2 and 0, so the first weight is {answer:.4f} — close to 1, not 1/2
    """
    from labkit.nn import attention

    q, k = np.array([[[10.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[2.0, 0.0], [0.0, 4.0]]])
    return float(attention(q, k, v, np.ones((1, 2), dtype=bool))[1][0, 0, 0])


@value(f"{LABS}/04-kv-cache-equivalence.md", "predict")
def cache_length_after_step_3() -> int:
    """prefill the first four lab tokens in one call, then decode three more one at a time: how many
    positions does the cache hold after the third step?

    idea: every forward pass appends the keys and values of the tokens it was fed, prefill included
    rule: the cache length is the number of tokens fed so far, not the number of decode steps
    why: four from the prefill and one per step: {answer} positions
    """
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    model, tokens = lab_decoder(), lab_tokens()
    _, cache = model.prefill(tokens[None, :4])
    for position in range(4, 7):
        model.decode_step(tokens[None, position : position + 1], cache)
    return int(cache.length)


@value(f"{LABS}/04-kv-cache-equivalence.md", "derive")
def lab_cache_bytes() -> int:
    """from the lab decoder's configuration: how many bytes do the keys and values of all seven lab tokens
    take, over every layer (float64)?

    idea: a cache holds a key and a value per layer, per KV head, per position, per head dimension
    rule: bytes = 2 · layers · KV heads · positions · head_dim · bytes per number
    why: 2 · 2 layers · 2 KV heads · 7 positions · 4 · 8 bytes = {answer}
    """
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    _, cache = lab_decoder().prefill(lab_tokens()[None, :])
    return int(sum(k.nbytes + v.nbytes for k, v in zip(cache.keys, cache.values, strict=True)))


def _dpo(beta_factor: float = 1.0):
    from labkit.labs import dpo

    return dpo.dpo_loss(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA * beta_factor)


@value(f"{LABS}/06-dpo.md", "predict")
def dpo_loss_when_beta_doubles() -> str:
    """keep the lab's pair and reference and double β: does the loss 'rise' or 'fall'?

    idea: β scales the margin inside the sigmoid: the sign of the margin decides which way the loss moves
    rule: L = −log σ(β·m); a larger β pushes σ(β·m) towards 0 when m < 0 and towards 1 when m > 0
    why: the lab pair's margin has the sign that makes the loss {answer} as β·m grows in size
    """
    return "rises" if _dpo(2.0) > _dpo(1.0) else "falls"


@value(f"{LABS}/06-dpo.md", "derive", tolerance=0.001)
def dpo_gradient_at_point() -> list[float]:
    """by hand: ∂L/∂[π_w, π_l] for policy log-probabilities [−1, −2], reference [−1.5, −1.5], β = 0.5 (±0.001)

    idea: DPO's gradient is the margin's gradient weighted by how wrong the policy still is
    rule: differentiate −log σ(β·m) through the margin m, which moves with π_w and against π_l
    why: m = 1, β·m = 0.5: the gradient is [{answer[0]:.4f}, {answer[1]:.4f}]
    """
    from labkit.labs.dpo import dpo_gradient

    return [float(g) for g in dpo_gradient((-1.0, -2.0), (-1.5, -1.5), 0.5)]


def _reward_groups():
    return [
        ("the lab's three groups", (np.array([[0.0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0]]),)),
        ("one success in eight", (np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]),)),
        ("two answers", (np.array([[3.0, -1.0]]),)),
    ]


@function(GRPO, "extend", _reward_groups)
def rloo_advantages(rewards):
    """a baseline the lab does not use: the leave-one-out (RLOO) advantage — each reward minus the mean
    reward of the *other* answers of its group; rewards [G, K] → [G, K]

    idea: a baseline should not contain the answer it judges
    rule: the other K − 1 answers' mean: the group's sum minus this reward, over K − 1
    """
    r = np.asarray(rewards, dtype=np.float64)
    return r - (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)


@value(GRPO, "derive", tolerance=0.005)
def lone_success_advantage() -> float:
    """the group 1 0 0 0 0 0 0 0 with ε = 0 and the population standard deviation: the correct answer's
    advantage (±0.005)

    idea: a GRPO advantage says how much better one answer is than the others of its own group
    rule: standardise within the group: subtract its mean, divide by its population standard deviation
    why: (1 − 1/8) / √(7/64) = √7 ≈ {answer:.4f}
    """
    from labkit.labs.grpo import group_advantages

    return float(group_advantages(np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]), ddof=0, eps=0.0)[0, 0])


@value(GRPO, "predict", tolerance=0.01)
def dual_clip_value() -> float:
    """for Â = −2, ε = 0.2 and dual-clip c = 3: what is J at ρ = 5? (±0.01)

    idea: with a negative advantage the ordinary clip cannot bound a huge ratio; the dual clip does
    rule: for Â < 0, J = max(min(ρÂ, clip(ρ)Â), c·Â)
    why: ρÂ = −10 is below c·Â = −6, so the dual clip holds J at {answer:g}
    """
    from labkit.labs.grpo import dual_clip_objective

    return float(dual_clip_objective(np.array([5.0]), np.array([-2.0]), 0.2, 3.0)[0])
