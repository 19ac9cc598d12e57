"""The attention of lab 03's cached decode step: the lab decoder fed its 7 tokens with k of them
already in the cache, under the causal (bottom-right aligned) mask or the decoder's
``top_left_rectangular_mask`` fault.  The attention player draws it (``labkit.reader.players.attention``).

    attention_state(cached=3).weights                                 # [H, Tq, Tk]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens
from labkit.nn import KVCache

MASK_KINDS = ("causal", "top-left rectangular")


class AttentionState(NamedTuple):
    """Attention of the new tokens of one lab-decoder step: ``cached`` tokens already sit in the
    cache, the other T_new = 7 − cached are fed at once.  weights [H, T_new, T] (rows: new
    queries, columns: every key), allowed [T_new, T], query_positions [T_new]."""

    cached: int
    mask: str
    layer: int
    weights: np.ndarray
    allowed: np.ndarray
    query_positions: np.ndarray


def attention_state(cached: int = 3, mask: str = "causal", layer: int = 0) -> AttentionState:
    """Run the lab decoder on its tokens with ``cached`` of them prefilled; keep layer ``layer``'s weights.

    mask "causal": query at position p sees keys 0…p (bottom-right aligned);
    mask "top-left rectangular": the decoder's ``top_left_rectangular_mask`` fault, the
    lower triangle of the [T_new, T] rectangle anchored at its top-left corner.
    """
    tokens = lab_tokens()
    if not isinstance(cached, (int, np.integer)) or not 0 <= cached < tokens.size:
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
