"""The exercises of chapter 11's labs 01–07; every answer comes from the labs' own kernels at check time,
and a variant's reference is written here, hidden: the kit does not hold it. Lab 04's cached attention
step runs inside the lab decoder (``decode_with_attention_step``), the others without a runtime.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import function, trace, value
from labkit.check.grading import lockstep, yes_or_no
from labkit.labs import dpo, masks
from labkit.labs.cache_equivalence import MODES, cached_logits, full_logits, run_case
from labkit.labs.causal_attention import PERTURB_FROM, PREFIX_SEED
from labkit.labs.common import masked_cross_entropy
from labkit.labs.dpo import dpo_gradient
from labkit.labs.lab_decoder import lab_decoder, lab_tokens
from labkit.labs.masks import packing_prediction_mask
from labkit.nn import KVCache, attention, causal_allowed, rms_norm, rope


def _uniform_row() -> tuple[float, np.ndarray]:
    return masked_cross_entropy(np.zeros((1, 3)), np.array([0]), np.array([True]))


@value
def uniform_row_loss() -> float:
    return float(_uniform_row()[0])


@value
def uniform_row_gradient() -> list[float]:
    return [float(v) for v in _uniform_row()[1][0]]


def _ce_cases():
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


@function(_ce_cases)
def masked_ce_gradient(logits, targets, valid):
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


@function(_log_softmax_cases)
def fixed_log_softmax(z):
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


@function(_window_cases)
def sliding_window_mask(document_ids, window):
    ids = np.asarray(document_ids)
    i, j = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (i - j >= 0) & (i - j < window)


@value
def packed_zero_predictions() -> int:
    return int(np.sum(~packing_prediction_mask([0, 0, 1, 1, 1, 2, 2, 2])))


def _attention_cases():
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


@function(_attention_cases)
def causal_self_attention(q, k, v):
    t = q.shape[0]
    output, weights = attention(q[None], k[None], v[None], np.tril(np.ones((t, t), dtype=bool)))
    return output[0], weights[0]


@value
def scaled_query_weight() -> float:
    q, k = np.array([[[10.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[2.0, 0.0], [0.0, 4.0]]])
    return float(attention(q, k, v, np.ones((1, 2), dtype=bool))[1][0, 0, 0])


@value
def cache_length_after_step_3() -> int:
    model, tokens = lab_decoder(), lab_tokens()
    _, cache = model.prefill(tokens[None, :4])
    for position in range(4, 7):
        model.decode_step(tokens[None, position : position + 1], cache)
    return int(cache.length)


@value
def lab_cache_bytes() -> int:
    _, cache = lab_decoder().prefill(lab_tokens()[None, :])
    return int(sum(k.nbytes + v.nbytes for k, v in zip(cache.keys, cache.values, strict=True)))


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


def decode_with_attention_step(step, model, tokens) -> np.ndarray:
    """Logits [T, V] of ``tokens`` decoded one at a time through ``model``'s layers (multi-head, as the lab
    decoder: as many key/value heads as query heads), with
    ``step(t, layer, q, cache_k, cache_v, k_new, v_new) -> (output, keys, values)`` as the cached
    attention (q, k_new, v_new [1, H, 1, d_h] rotated at position t; cache [1, H, t, d_h]); the rest
    is the model's own weights and labkit.nn's functions, in the order of ``Decoder.forward``."""
    cfg, weights = model.config, model.weights
    empty = np.zeros((1, cfg.n_kv_heads, 0, cfg.head_dim), dtype=np.dtype(cfg.dtype))
    cached = [(empty, empty) for _ in range(cfg.n_layers)]  # per layer: (K, V)
    logits = np.empty((len(tokens), cfg.vocab_size), dtype=np.dtype(cfg.dtype))
    for t, token in enumerate(np.asarray(tokens)):
        hidden, position = weights.embedding[[[int(token)]]], np.array([t])  # [1, 1, d], [1]
        for layer, w in enumerate(weights.layers):
            z = rms_norm(hidden, cfg.norm_eps)
            q, k, v = (model._split_heads(z @ w[name], cfg.n_kv_heads) for name in ("q", "k", "v"))
            q, k = rope(q, position, cfg.rope_base), rope(k, position, cfg.rope_base)
            attended, *cached[layer] = step(t, layer, q, *cached[layer], k, v)
            hidden = hidden + model._merge_heads(attended) @ w["o"]
            z = rms_norm(hidden, cfg.norm_eps)  # then x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down
            gate = z @ w["gate"]
            hidden = hidden + (gate * (z @ w["up"]) / (1.0 + np.exp(-gate))) @ w["down"]
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


def _caches():
    near = run_case("correct").cache.copy()
    near.keys[1] = near.keys[0] + 1e-13
    cases = [(f"decoder {mode} after 7 steps", (run_case(mode).cache,)) for mode in MODES]
    return [*cases, ("layer 1 = layer 0 + 1e-13 (rounding noise)", (near,))]


@function(_caches, hook=yes_or_no)
def distinct_layer_keys(cache):
    return not np.allclose(cache.keys[0], cache.keys[1])


def _decoders():
    cases = [(f"decoder {mode}, the lab's tokens", (lab_decoder(fault), lab_tokens())) for mode, fault in MODES.items()]
    return [*cases, ("decoder correct, tokens [16, 0, 7, 7]", (lab_decoder(None), np.array([16, 0, 7, 7])))]


@function(_decoders, hook=yes_or_no)
def cached_path_agrees(model, tokens):
    return bool(np.allclose(cached_logits(model, tokens)[0], full_logits(model, tokens), atol=1e-12, rtol=1e-12))


def _dpo(beta_factor: float = 1.0):
    return dpo.dpo_loss(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA * beta_factor)


@value
def dpo_loss_when_beta_doubles() -> str:
    return "rises" if _dpo(2.0) > _dpo(1.0) else "falls"


@value
def dpo_gradient_at_point() -> list[float]:
    return [float(g) for g in dpo_gradient((-1.0, -2.0), (-1.5, -1.5), 0.5)]
