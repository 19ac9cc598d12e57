"""Solutions for the first five chapter-11 labs (CE gradient, masks, causal attention, KV cache, faults)."""

import numpy as np


def masked_ce_gradient(logits, targets, valid):
    z = np.asarray(logits, dtype=np.float64)
    stable = np.exp(z - z.max(axis=1, keepdims=True))  # softmax is shift-invariant; avoids overflow
    softmax = stable / stable.sum(axis=1, keepdims=True)
    onehot = np.eye(z.shape[1])[targets]
    keep = np.asarray(valid, dtype=bool)
    return (softmax - onehot) * (keep / keep.sum())[:, None]


def causal_self_attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    future = np.triu(np.ones(scores.shape, dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def cached_attention_step(q, cache_k, cache_v, k_new, v_new):
    keys = np.concatenate([cache_k, k_new], axis=2)
    values = np.concatenate([cache_v, v_new], axis=2)
    scores = q @ np.swapaxes(keys, -1, -2) / np.sqrt(q.shape[-1])  # [B, H, 1, T+1]
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ values, keys, values


def distinct_layer_keys(cache):
    return not np.allclose(cache.keys[0], cache.keys[1])


def cached_path_agrees(model, tokens):
    tokens = np.asarray(tokens)
    full = model.full_logits(tokens[np.newaxis, :])[0]
    first, cache = model.prefill(tokens[np.newaxis, :1])  # the model's own cache (labkit check --file needs it)
    steps = [model.decode_step(np.array([token]), cache).next_logits[0] for token in tokens[1:]]
    stepped = np.stack([first.next_logits[0], *steps])
    return bool(np.allclose(stepped, full, atol=1e-12, rtol=1e-12))
