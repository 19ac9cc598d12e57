"""Worked solutions of chapter 11's labs 01–06 (CE gradient, masks, causal attention, KV cache, cache faults,
DPO): what a student would hand in — a function for a diagnose, extend or derive exercise, a value worked out
by hand for a prediction."""

import math

import numpy as np

# --- 01: −ln(1/3); the gradient [1/3 − 1, 1/3, 1/3] ---------------------------------------------
uniform_row_loss = math.log(3)
uniform_row_gradient = (-2 / 3, 1 / 3, 1 / 3)


def masked_ce_gradient(logits, targets, weights):
    z = np.asarray(logits, dtype=np.float64)
    stable = np.exp(z - z.max(axis=1, keepdims=True))  # softmax is shift-invariant; avoids overflow
    softmax = stable / stable.sum(axis=1, keepdims=True)
    onehot = np.eye(z.shape[1])[targets]
    w = np.asarray(weights, dtype=np.float64)
    return (softmax - onehot) * (w / w.sum())[:, None]  # ∂/∂zₙ of Σ wₙ·CEₙ / Σ w = wₙ (pₙ − yₙ) / Σ w


def fixed_log_softmax_grad(z, upstream):
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    p = np.exp(shifted) / np.sum(np.exp(shifted), axis=-1, keepdims=True)  # the shift on both sides
    return upstream - p * np.sum(upstream, axis=-1, keepdims=True)


# --- 02: 7 predictions, 2 borders ------------------------------------------------------------------
packed_zero_predictions = 2


def sliding_window_mask(document_ids, window):
    ids = np.asarray(document_ids)
    i, j = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (j <= i) & (i - j < window)


# --- 03: scores 10/√2 and 0 ------------------------------------------------------------------------
scaled_query_weight = 1 / (1 + math.exp(-10 / math.sqrt(2)))


def alibi_causal_attention(q, k, v, slope):
    t = q.shape[0]
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    scores = q @ k.T / np.sqrt(q.shape[-1]) - slope * (i - j)
    scores = np.where(j <= i, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


# --- 04: 4 + 3 positions; K and V per layer, sequence, KV head, position, head dimension -------------
cache_length_after_step_3 = 7


def cached_attention_step(q, cache_k, cache_v, k_new, v_new):
    keys = np.concatenate([cache_k, k_new], axis=2)
    values = np.concatenate([cache_v, v_new], axis=2)
    scores = q @ np.swapaxes(keys, -1, -2) / np.sqrt(q.shape[-1])  # [B, H, 1, T+1]
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ values, keys, values


def kv_cache_bytes(config, batch, positions):
    number = np.dtype(config.dtype).itemsize
    return 2 * config.n_layers * batch * config.n_kv_heads * positions * config.head_dim * number


# --- 05 ----------------------------------------------------------------------------------------------


def distinct_layer_keys(cache):
    return not np.allclose(cache.keys[0], cache.keys[1])


def cached_path_agrees(model, tokens):
    tokens = np.asarray(tokens)
    full = model.full_logits(tokens[np.newaxis, :])[0]
    first, cache = model.prefill(tokens[np.newaxis, :1])  # the model's own cache (labkit check --file needs it)
    steps = [model.decode_step(np.array([token]), cache).next_logits[0] for token in tokens[1:]]
    stepped = np.stack([first.next_logits[0], *steps])
    return bool(np.allclose(stepped, full, atol=1e-12, rtol=1e-12))


# --- 06: the margin is positive, so a larger β·Δ lowers −log σ(β·Δ) ----------------------------------
dpo_loss_when_beta_doubles = "falls"


def smoothed_dpo_gradient(policy, reference, beta, smoothing):
    margin = beta * ((policy[0] - reference[0]) - (policy[1] - reference[1]))
    sigma = 1.0 / (1.0 + np.exp(-margin))  # σ(m); σ(−m) = 1 − σ(m)
    d_margin = -(1.0 - smoothing) * (1.0 - sigma) + smoothing * sigma  # ∂L/∂m
    return np.array([beta * d_margin, -beta * d_margin])
