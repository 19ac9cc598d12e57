"""Exercise of lab 04: one cached decode step of attention, driven through the lab decoder."""

from __future__ import annotations

import numpy as np

from labkit.check.core import trace
from labkit.check.grading import lockstep
from labkit.labs.lab_decoder import lab_decoder, lab_tokens
from labkit.nn import KVCache, attention, causal_allowed, rms_norm, rope


def _reference_step(q, cache_k, cache_v, k_new, v_new):
    """The runtime's own pieces: ``KVCache.append`` for the cache, the decoder's causal mask and
    ``attention``.  q, k_new, v_new [B, H, 1, d_h]; cache_k, cache_v [B, H, T, d_h]."""
    cache = KVCache(1)
    if cache_k.shape[-2]:
        cache.keys[0], cache.values[0] = cache_k, cache_v
    keys, values = cache.append(0, k_new, v_new)
    length = keys.shape[-2]
    output, _ = attention(q, keys, values, causal_allowed(np.array([length - 1]), np.arange(length)))
    return output, keys, values


def _rotated_projections(model, w, x, position) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Layer input x [1, 1, d] → q, k, v [1, H, 1, d_h]; q and k carry RoPE at ``position`` [1]."""
    cfg = model.config
    normed = rms_norm(x, cfg.norm_eps)
    q, k, v = (model._split_heads(normed @ w[name], cfg.n_kv_heads) for name in ("q", "k", "v"))
    return rope(q, position, cfg.rope_base), rope(k, position, cfg.rope_base), v


def _feed_forward_block(model, w, x) -> np.ndarray:
    """x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down with z = RMSNorm(x);  [1, 1, d] → [1, 1, d]."""
    z = rms_norm(x, model.config.norm_eps)
    gate, up = z @ w["gate"], z @ w["up"]
    return x + (gate * up / (1.0 + np.exp(-gate))) @ w["down"]


def decode_with_attention_step(step, model, tokens) -> np.ndarray:
    """Logits [T, V] of ``tokens`` decoded one at a time through ``model``'s layers, with
    ``step(t, layer, q, cache_k, cache_v, k_new, v_new) -> (output, keys, values)`` as the cached
    attention (q, k_new, v_new [1, H, 1, d_h] rotated at position t; cache [1, H, t, d_h]); the rest
    is the model's own weights and labkit.nn's functions."""
    cfg, weights = model.config, model.weights
    if cfg.group_size != 1:
        raise ValueError(f"the driver expects multi-head attention (group size 1), got {cfg.group_size}")
    empty = np.zeros((1, cfg.n_kv_heads, 0, cfg.head_dim), dtype=np.dtype(cfg.dtype))
    cached = [(empty, empty) for _ in range(cfg.n_layers)]  # per layer: (K, V)
    logits = np.empty((len(tokens), cfg.vocab_size), dtype=np.dtype(cfg.dtype))
    for t, token in enumerate(np.asarray(tokens)):
        hidden = weights.embedding[[[int(token)]]]  # [1, 1, d]
        for layer, w in enumerate(weights.layers):
            q, k, v = _rotated_projections(model, w, hidden, np.array([t]))
            attended, *cached[layer] = step(t, layer, q, *cached[layer], k, v)
            hidden = _feed_forward_block(model, w, hidden + model._merge_heads(attended) @ w["o"])
        logits[t] = (rms_norm(hidden, cfg.norm_eps) @ weights.output)[0, 0]
    return logits


@trace
def cached_attention_step():
    model, tokens = lab_decoder(), lab_tokens()

    def run(candidate):
        def step(t, layer, *args):
            where = f"decode step {t} (token {int(tokens[t])} at position {t}), layer {layer}"
            outputs = ("output", "keys", "values")
            return lockstep(candidate, _reference_step, args, where=where, outputs=outputs, first="keys")

        return decode_with_attention_step(step, model, tokens)

    return [(f"the lab decoder's {tokens.size} tokens", None, run)]
