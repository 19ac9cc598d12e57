"""Exercise of lab 04: one cached decode step of attention, driven through the lab decoder."""

from __future__ import annotations

import numpy as np

from labkit.check._support import failure_at, first_bad_index, non_finite_index
from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, numeric_array, passed, unpack


def _reference_step(q, cache_k, cache_v, k_new, v_new):
    """The runtime's own pieces: ``KVCache.append`` for the cache, the decoder's causal mask and
    ``attention``.  q, k_new, v_new [B, H, 1, d_h]; cache_k, cache_v [B, H, T, d_h]."""
    from labkit.nn import KVCache, attention, causal_allowed

    cache = KVCache(1)
    if cache_k.shape[-2]:
        cache.keys[0], cache.values[0] = cache_k, cache_v
    keys, values = cache.append(0, k_new, v_new)
    length = keys.shape[-2]
    output, _ = attention(q, keys, values, causal_allowed(np.array([length - 1]), np.arange(length)))
    return output, keys, values


def _rotated_projections(model, w, x, position) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Layer input x [1, 1, d] → q, k, v [1, H, 1, d_h]; q and k carry RoPE at ``position`` [1]."""
    from labkit.nn import rms_norm, rope

    cfg = model.config
    normed = rms_norm(x, cfg.norm_eps)
    q, k, v = (model._split_heads(normed @ w[name], cfg.n_kv_heads) for name in ("q", "k", "v"))
    return rope(q, position, cfg.rope_base), rope(k, position, cfg.rope_base), v


def _feed_forward_block(model, w, x) -> np.ndarray:
    """x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down with z = RMSNorm(x);  [1, 1, d] → [1, 1, d]."""
    from labkit.nn import rms_norm

    z = rms_norm(x, model.config.norm_eps)
    gate, up = z @ w["gate"], z @ w["up"]
    return x + (gate * up / (1.0 + np.exp(-gate))) @ w["down"]


def decode_with_attention_step(step, model, tokens) -> np.ndarray:
    """Decode ``tokens`` [T] one at a time through ``model``'s layers with ``step`` as the cached attention.

    ``step(t, layer, q, cache_k, cache_v, k_new, v_new) -> (output, keys, values)`` with
    q, k_new, v_new [1, H, 1, d_h] (already rotated by RoPE at position t), cache_k/cache_v
    [1, H, t, d_h]; it returns the attention output [1, H, 1, d_h] and the grown cache
    [1, H, t + 1, d_h].  Everything else — embedding, RMSNorm, RoPE, projections, SwiGLU, the
    head — is the model's own weights and labkit.nn's functions.  Returns logits [T, V].
    """
    from labkit.nn import rms_norm

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


class _Divergence(Exception):
    def __init__(self, result: CheckResult):
        self.result = result


@exercise(
    "cached_attention_step",
    page="notebooks/11-labs/04-kv-cache-equivalence.md",
    signature=("q", "cache_k", "cache_v", "k_new", "v_new"),
    kind="extend",
    idea="a cached step must see exactly what the full pass sees at that position: everything before it and itself",
    rule="the new entry is appended after the cached positions, along the position axis, never in place of "
    "them; the new query sees every cached key and its own, scaled as in the full pass",
)
def cached_attention_step(candidate) -> CheckResult:
    """one decode step of attention with a KV cache: append k_new, v_new [B, H, 1, d_h] to cache_k,
    cache_v [B, H, T, d_h] and attend q [B, H, 1, d_h] to all T + 1 positions; return (output
    [B, H, 1, d_h], keys [B, H, T+1, d_h], values [B, H, T+1, d_h])"""
    from labkit.labs.cache_equivalence import ABS_TOLERANCE, full_logits
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    model, tokens = lab_decoder(), lab_tokens()

    def step(t, layer, q, cache_k, cache_v, k_new, v_new):
        where = f"decode step {t} (token {int(tokens[t])} at position {t}), layer {layer}"
        ref_out, ref_k, ref_v = _reference_step(q, cache_k, cache_v, k_new, v_new)
        got = call(candidate, q.copy(), cache_k.copy(), cache_v.copy(), k_new.copy(), v_new.copy())
        try:
            got = unpack(got, ("output", "keys", "values"))
            out = numeric_array(got[0], "output", ref_out.shape)
        except CandidateProblem as problem:
            raise CandidateProblem(f"at {where}: {problem}") from None
        for label, array, ref in (("keys", got[1], ref_k), ("values", got[2], ref_v)):
            array = np.asarray(array)
            if array.shape != ref.shape:
                raise _Divergence(
                    failure(
                        f"the returned {label} have the wrong shape",
                        where=where,
                        rule=f"the cache grows by one position along axis −2: [B, H, {t}, d_h] → [B, H, {t + 1}, d_h]",
                        got=list(array.shape),
                        expected=list(ref.shape),
                    )
                )
            bad = first_bad_index(numeric_array(array, label, ref.shape), ref)
            if bad is not None:
                raise _Divergence(
                    failure(
                        f"the returned {label} differ from the cache",
                        where=f"{where}, {label}{list(bad)}",
                        rule="returned cache = old cache followed by the new position",
                        got=array[bad].item(),
                        expected=ref[bad].item(),
                    )
                )
        broken = non_finite_index(out)
        bad = broken if broken is not None else first_bad_index(out, ref_out)
        if bad is not None:
            raise _Divergence(
                failure(
                    "the attention output differs",
                    where=f"{where}, output{list(bad)}",
                    rule="the attention output (within 1e-12)",
                    got=out[bad].item(),
                    expected=ref_out[bad].item(),
                )
            )
        return out, ref_k, ref_v

    try:
        logits = decode_with_attention_step(step, model, tokens)
    except _Divergence as divergence:
        return divergence.result
    expected = full_logits(model, tokens)
    bad = first_bad_index(logits, expected, atol=ABS_TOLERANCE)
    if bad is not None:  # pragma: no cover - every step matched, so only a broken driver gets here
        return failure_at(
            "cached logits differ from the full pass",
            logits,
            expected,
            bad,
            where=f"logits{list(bad)}",
            rule="cached decode equals the full pass",
        )
    return passed(
        f"all {tokens.size} decode steps × {model.config.n_layers} layers match; "
        f"your cached logits [{tokens.size}, {model.config.vocab_size}] equal "
        "the full pass within 1e-12"
    )
