"""Lab: a KV cache changes the cost of decoding, never its logits.

The lab decoder reads tokens [1, 5, 3, 8, 2, 9, 4] three ways:
- *full*: one forward pass over all seven tokens, causal mask, no cache;
- *cached*: seven decode steps from an empty cache, each feeding one token at
  position ``cache.length`` and attending to every cached key;
- *prefix recompute*: for each t, a fresh full pass over tokens[:t+1], keeping its last row.
All three give the same [7, 17] logits up to float64 rounding (1e-12).  The cache holds, per
layer, keys and values [B, H, T, d_h] = [1, 2, 7, 4]; the report drops the batch axis.
"""

from __future__ import annotations

import numpy as np

from labkit.labs.common import max_abs_difference, require, require_close
from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens
from labkit.nn import Decoder, KVCache

ABS_TOLERANCE = 1e-12
RELATIVE_TOLERANCE = 1e-12
#: the future-perturbation check replaces tokens 4, 5, 6 by these
CHANGED_FUTURE = (10, 11, 12)
CHANGED_FROM = 4


def full_logits(model: Decoder, tokens: np.ndarray) -> np.ndarray:
    """tokens [T] → logits [T, V] of one uncached forward pass."""
    return model.full_logits(np.asarray(tokens)[np.newaxis, :])[0]


def cached_logits(model: Decoder, tokens: np.ndarray) -> tuple[np.ndarray, KVCache]:
    """Decode ``tokens`` [T] one at a time from an empty cache: logits [T, V] and the cache."""
    cache = KVCache(model.config.n_layers)
    rows = [model.decode_step(np.array([token]), cache).next_logits[0] for token in np.asarray(tokens)]
    return np.stack(rows), cache


def prefix_recompute_logits(model: Decoder, tokens: np.ndarray) -> np.ndarray:
    """Row t = last row of a fresh full pass over tokens[:t+1]: [T, V]."""
    tokens = np.asarray(tokens)
    return np.stack([full_logits(model, tokens[: t + 1])[-1] for t in range(tokens.size)])


def per_sequence_cache_shapes(cache: KVCache) -> list[list[int]]:
    """Each layer's key shape [H, T, d_h] (the batch axis of [B, H, T, d_h] dropped; B = 1)."""
    return [list(keys.shape[1:]) for keys in cache.keys]


def run() -> dict:
    """The ``cache_equivalence`` object of the source report."""
    model = lab_decoder()
    tokens = lab_tokens()
    full = full_logits(model, tokens)
    cached, cache = cached_logits(model, tokens)
    recomputed = prefix_recompute_logits(model, tokens)
    for name, other in (("full", full), ("prefix recompute", recomputed)):
        require_close(f"{name} vs cached logits", other, cached, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE)
    distinct = not np.allclose(cache.keys[0], cache.keys[1])
    require(distinct, "layers 0 and 1 hold the same cached keys: a layer lost its own cache")
    changed = tokens.copy()
    changed[CHANGED_FROM:] = CHANGED_FUTURE
    future_error = max_abs_difference(full[:CHANGED_FROM], full_logits(model, changed)[:CHANGED_FROM])
    cfg = LAB_CONFIG
    return {
        "configuration": {
            "layers": cfg.n_layers,
            "heads": cfg.n_q_heads,
            "head_dim": cfg.head_dim,
            "width": cfg.width,
            "ffn_width": cfg.ffn_width,
            "vocab": cfg.vocab_size,
            "tokens": int(tokens.size),
            "dtype": cfg.dtype,
            "position": "pairwise RoPE",
            "ffn": "SwiGLU",
        },
        "full_vs_cached_max_abs_logit_error": max_abs_difference(full, cached),
        "prefix_vs_cached_max_abs_logit_error": max_abs_difference(recomputed, cached),
        "future_perturbation_prefix_max_error": future_error,
        "per_layer_cache_shapes": per_sequence_cache_shapes(cache),
        "abs_tolerance": ABS_TOLERANCE,
        "relative_tolerance": RELATIVE_TOLERANCE,
    }
