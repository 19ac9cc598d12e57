"""The chapter-11 lab decoder: the book's one transformer with a tiny float64 configuration (``lab-decoder``:
2 layers, 2 heads × 4, width 8, SwiGLU 12, vocabulary 17, RoPE base 10000, RMSNorm eps 1e-6).

It has no checkpoint: its weights are Gaussian draws from ``default_rng(11)`` taken in the source's
order; reordering the draws changes every figure of chapter 11.
"""

import functools
from typing import NamedTuple

import numpy as np

from labkit.core.guards import is_integer
from labkit.nn import Decoder, DecoderFaults, DecoderWeights, KVCache
from labkit.nn.configs import book_config

#: The token IDs every decoder lab feeds: [T] = [7].
LAB_TOKENS = (1, 5, 3, 8, 2, 9, 4)

LAB_CONFIG = book_config("lab-decoder")


def lab_weights(seed: int = 11) -> DecoderWeights:
    """Weights drawn as N(0, std²) from ``default_rng(seed)`` in the source's order, which is the order of
    ``weight_shapes()``: embedding [17, 8] (std 0.3), output [8, 17], then per layer q, k, v, o [8, 8],
    gate, up [8, 12], down [12, 8] (std 0.2)."""
    generator = np.random.default_rng(seed)
    arrays = {
        name: generator.normal(0.0, 0.3 if name == "embedding" else 0.2, shape)
        for name, shape in LAB_CONFIG.weight_shapes().items()
    }
    return DecoderWeights.from_arrays(arrays, LAB_CONFIG)


def lab_decoder(fault: str | None = None) -> Decoder:
    """The lab decoder with the ``DecoderFaults`` switch ``fault`` on (None: correct)."""
    return Decoder(LAB_CONFIG, _shared_weights(), DecoderFaults.named(fault))


@functools.cache
def _shared_weights() -> DecoderWeights:
    """``lab_weights()`` drawn once, read-only, shared by every lab decoder."""
    weights = lab_weights()
    for array in weights.to_arrays().values():
        array.flags.writeable = False
    return weights


def lab_tokens() -> np.ndarray:
    """The lab's token IDs as an int64 array [7]."""
    return np.array(LAB_TOKENS, dtype=np.int64)


MASK_KINDS = ("causal", "top-left rectangular")


class AttentionState(NamedTuple):
    """Attention of the T_new = 7 − ``cached`` tokens fed at once: weights [H, T_new, T], allowed [T_new, T],
    query_positions [T_new]."""

    cached: int
    mask: str
    layer: int
    weights: np.ndarray
    allowed: np.ndarray
    query_positions: np.ndarray


def attention_state(cached: int = 3, mask: str = "causal", layer: int = 0) -> AttentionState:
    """Lab 03's step for the attention player: the lab tokens with ``cached`` of them prefilled, layer ``layer``'s
    attention under ``mask``.

    "causal": query at position p sees keys 0…p (bottom-right aligned); "top-left rectangular": the
    decoder's ``top_left_rectangular_mask`` fault, the lower triangle of the [T_new, T] rectangle
    anchored at its top-left corner.
    """
    tokens = lab_tokens()
    if not is_integer(cached) or not 0 <= cached < tokens.size:
        raise ValueError(f"cached must be an integer in [0, {tokens.size - 1}], got {cached!r}")
    if mask not in MASK_KINDS:
        raise ValueError(f"mask must be one of {list(MASK_KINDS)}, got {mask!r}")
    if layer not in range(LAB_CONFIG.n_layers):
        raise ValueError(f"layer must be in [0, {LAB_CONFIG.n_layers - 1}], got {layer!r}")
    model = lab_decoder("top_left_rectangular_mask" if mask == MASK_KINDS[1] else None)
    cache = KVCache(model.config.n_layers)
    if cached:
        model.prefill(tokens[np.newaxis, :cached], cache)
    result = model.decode(tokens[np.newaxis, cached:], cache, keep_attention=True)
    weights = result.layers[layer].attention_weights[0]  # [H, T_new, T]
    _, allowed = model.faults.decode_inputs(result.positions, np.arange(weights.shape[-1]))  # the mask it ran with
    return AttentionState(int(cached), mask, layer, weights, allowed, result.positions)
