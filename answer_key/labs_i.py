"""The key of chapter 11's labs 01–06: each graded exercise's hidden reference and the hidden cases it is
compared on (other shapes, seeds, configurations and regimes than the public properties use), so an answer
that only fits the public cases, or a numerical gradient in place of a derived one, is caught."""

from __future__ import annotations

import numpy as np

from labkit.check.core import function
from labkit.labs.cache_equivalence import cached_logits, full_logits
from labkit.labs.lab_decoder import lab_decoder
from labkit.nn import Decoder, DecoderConfig, DecoderFaults, DecoderWeights, KVCache, attention, causal_allowed
from labkit.nn.configs import book_config

# --- 01 ------------------------------------------------------------------------------------------


def _weighted_cases():
    rng = np.random.default_rng(101)
    return [
        (
            "a [6, 7] batch, logits of spread 3, one row of weight 0",
            (rng.normal(0, 3, (6, 7)), rng.integers(0, 7, 6), np.array([0.2, 1.5, 0.0, 3.0, 0.7, 1.0])),
        ),
        (
            "one row of weight 0.25 (the weights' scale cancels)",
            (rng.normal(size=(1, 4)), np.array([3]), np.array([0.25])),
        ),
        (
            "negative logits in the thousands",
            (
                np.array([[-1000.0, -1003, -1001], [2000, 1990, 0], [5, 5, 5]]),
                np.array([1, 2, 0]),
                np.array([2.0, 0.5, 1.0]),
            ),
        ),
    ]


@function(_weighted_cases)
def masked_ce_gradient(logits, targets, weights):
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(targets)), targets] -= 1.0  # softmax − onehot
    w = np.asarray(weights, dtype=np.float64)
    return p * (w / w.sum())[:, None]


def _backward_cases():
    rng = np.random.default_rng(102)
    return [
        ("a [3, 6] batch of spread 5", (rng.normal(0, 5, (3, 6)), rng.normal(size=(3, 6)))),
        ("a row whose maximum is 0, upstream all ones", (np.array([[0.0, -0.5, -3.0, -1.0]]), np.ones((1, 4)))),
        (
            "a row of negative logits in the thousands",
            (np.array([[-1000.0, -1001, -1005]]), np.array([[2.0, -1, 0.5]])),
        ),
    ]


@function(_backward_cases)
def fixed_log_softmax_grad(z, upstream):
    z = np.asarray(z, dtype=np.float64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return upstream - p * np.sum(upstream, axis=-1, keepdims=True)


# --- 02, 03 --------------------------------------------------------------------------------------


def _window_cases():
    return [
        ("nine tokens of one document, window 4", (np.full(9, 3), 4)),
        ("every token its own document, window 2", (np.array([0, 1, 2, 3]), 2)),
        ("documents of 2, 5 and 2, window 3", (np.array([0, 0, 1, 1, 1, 1, 1, 2, 2]), 3)),
        ("a window exactly as long as the row", (np.array([5, 5, 5, 6, 6]), 5)),
    ]


@function(_window_cases)
def sliding_window_mask(document_ids, window):
    ids = np.asarray(document_ids)
    i, j = np.arange(ids.size)[:, None], np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (i - j >= 0) & (i - j < window)


def _alibi_cases():
    rng = np.random.default_rng(103)
    one = rng.normal(size=(1, 3))
    return [
        ("a single token, slope 2", (one, one, one, 2.0)),
        ("seven tokens, d_h = 3, slope 1.3", tuple(rng.normal(size=(3, 7, 3))) + (1.3,)),
        ("five tokens, slope 40 (far keys underflow)", tuple(rng.normal(size=(3, 5, 4))) + (40.0,)),
        ("six tokens, d_h = 16, slope 0", tuple(rng.normal(0, 2, (3, 6, 16))) + (0.0,)),
    ]


@function(_alibi_cases)
def alibi_causal_attention(q, k, v, slope):
    t = q.shape[0]
    bias = -slope * (np.arange(t)[:, None] - np.arange(t)[None, :])  # −slope·(i − j)
    scores = q @ k.T / np.sqrt(q.shape[-1]) + bias
    scores = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


# --- 04 ------------------------------------------------------------------------------------------


def _step_cases():
    rng = np.random.default_rng(104)

    def case(b, h, t, d):
        return (
            rng.normal(size=(b, h, 1, d)),
            rng.normal(size=(b, h, t, d)),
            rng.normal(size=(b, h, t, d)),
            rng.normal(size=(b, h, 1, d)),
            rng.normal(size=(b, h, 1, d)),
        )

    return [
        ("two sequences, three heads, an empty cache, d_h = 6", case(2, 3, 0, 6)),
        ("one sequence, two heads, five cached positions", case(1, 2, 5, 4)),
        ("three sequences, one head, nine cached positions, d_h = 8", case(3, 1, 9, 8)),
    ]


@function(_step_cases)
def cached_attention_step(q, cache_k, cache_v, k_new, v_new):
    cache = KVCache(1)
    if cache_k.shape[-2]:
        cache.keys[0], cache.values[0] = cache_k, cache_v
    keys, values = cache.append(0, k_new, v_new)
    length = keys.shape[-2]
    output, _ = attention(q, keys, values, causal_allowed(np.array([length - 1]), np.arange(length)))
    return output, keys, values


def _size_cases():
    wide = DecoderConfig("hidden-a", 10, 12, 3, 6, 3, 2, 8, "float64")
    grouped = DecoderConfig("hidden-b", 10, 16, 1, 8, 1, 4, 8, "float32")
    # lab 10's 7B layout, with a vocabulary no array can hold: only the formula answers, no measurement
    huge = DecoderConfig("hidden-7b", 2**62, 4096, 32, 32, 8, 128, 11008, "float32")
    return [
        ("a 7B layout: 32 layers, 8 KV heads of 128, float32, 8 × 8192", (huge, 8, 8192)),
        ("three layers, 6 query heads on 3 KV heads, d_h = 2, 4 × 11", (wide, 4, 11)),
        ("one layer, 8 query heads on 1 KV head, float32, 1 × 100", (grouped, 1, 100)),
        ("the lab decoder, 5 sequences of 1 token", (book_config("lab-decoder"), 5, 1)),
    ]


@function(_size_cases)
def kv_cache_bytes(config, batch, positions):
    return (
        2 * config.n_layers * batch * config.n_kv_heads * positions * config.head_dim * np.dtype(config.dtype).itemsize
    )


# --- 05 ------------------------------------------------------------------------------------------


def _decoder(config: DecoderConfig, fault: str | None = None, seed: int = 105) -> Decoder:
    rng = np.random.default_rng(seed)
    arrays = {name: rng.normal(0.0, 0.3, shape) for name, shape in config.weight_shapes().items()}
    return Decoder(config, DecoderWeights.from_arrays(arrays, config), DecoderFaults.named(fault))


THREE_LAYERS = DecoderConfig("hidden-c", 11, 8, 3, 2, 1, 4, 12, "float64")


def _decoded(model: Decoder, tokens) -> KVCache:
    return cached_logits(model, np.asarray(tokens))[1]


def _cache_cases():
    correct = _decoded(_decoder(THREE_LAYERS), [1, 2, 3, 4, 5])
    noisy, close = correct.copy(), correct.copy()
    noisy.keys[1] = noisy.keys[0] + 1e-3
    close.keys[1] = close.keys[0] * (1 + 1e-12)
    return [
        ("a correct three-layer GQA decoder's cache", (correct,)),
        (
            "its layer 0 and 1 copied (copy_layer0_cache_to_layer1)",
            (_decoded(_decoder(THREE_LAYERS, "copy_layer0_cache_to_layer1"), [1, 2, 3, 4, 5]),),
        ),
        ("layer 1 = layer 0 + 1e-3 (a real difference)", (noisy,)),
        ("layer 1 = layer 0 · (1 + 1e-12)", (close,)),
        ("the lab decoder's cache after tokens [0, 16]", (_decoded(lab_decoder(), [0, 16]),)),
    ]


@function(_cache_cases)
def distinct_layer_keys(cache):
    return not np.allclose(cache.keys[0], cache.keys[1])


def _decoder_cases():
    cases = [
        ("the lab decoder, six equal tokens", (lab_decoder(), np.full(6, 3))),
        ("reset_rope_position, two tokens", (lab_decoder("reset_rope_position"), np.array([1, 5]))),
        (
            "copy_layer0_cache_to_layer1, three tokens",
            (lab_decoder("copy_layer0_cache_to_layer1"), np.array([1, 5, 3])),
        ),
        ("top_left_rectangular_mask, two tokens", (lab_decoder("top_left_rectangular_mask"), np.array([1, 5]))),
        ("a correct three-layer GQA decoder", (_decoder(THREE_LAYERS), np.array([4, 0, 9, 2]))),
        (
            "the same decoder with reset_rope_position",
            (_decoder(THREE_LAYERS, "reset_rope_position"), np.array([4, 0, 9, 2])),
        ),
    ]
    return [(label, args, _known(label, args)) for label, args in cases]


_VERDICTS: dict[str, bool] = {}


def _known(label: str, args) -> bool:
    """The reference's verdict on a case, computed once per process (each costs a dozen forward passes)."""
    if label not in _VERDICTS:
        _VERDICTS[label] = cached_path_agrees.reference(*args)  # the name is the exercise, once decorated
    return _VERDICTS[label]


@function(_decoder_cases)
def cached_path_agrees(model, tokens):
    stepped = cached_logits(model, np.asarray(tokens))[0]
    return bool(np.allclose(stepped, full_logits(model, np.asarray(tokens)), atol=1e-12, rtol=1e-12))


# --- 06 ------------------------------------------------------------------------------------------


def _dpo_cases():
    return [
        ("a pair far apart: [−0.5, −60], β = 1, ε = 0.1", (np.array([-0.5, -60.0]), np.array([-2.0, -2.0]), 1.0, 0.1)),
        ("ε = 0.49, β = 0.05", (np.array([-3.0, -2.5]), np.array([-2.0, -4.0]), 0.05, 0.49)),
        ("a margin of exactly 0, ε = 0.2", (np.array([-1.0, -2.0]), np.array([-1.0, -2.0]), 0.7, 0.2)),
        ("a badly ranked pair, m = −30, ε = 0.05", (np.array([-31.0, -1.0]), np.array([-1.0, -1.0]), 1.0, 0.05)),
    ]


@function(_dpo_cases)
def smoothed_dpo_gradient(policy, reference, beta, smoothing):
    margin = beta * ((policy[0] - reference[0]) - (policy[1] - reference[1]))
    sig_pos, sig_neg = 1.0 / (1.0 + np.exp(-margin)), 1.0 / (1.0 + np.exp(margin))  # σ(m), σ(−m)
    d_margin = smoothing * sig_pos - (1.0 - smoothing) * sig_neg  # ∂L/∂m
    return np.array([beta * d_margin, -beta * d_margin])
