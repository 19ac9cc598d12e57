"""The chapter-11 lab decoder: the book's one transformer with a tiny float64 configuration.

Two pre-norm layers, 2 heads × 4 (multi-head: as many key/value heads as query heads),
width 8, SwiGLU width 12, vocabulary 17, pairwise RoPE (base 10000), RMSNorm eps 1e-6.
It has no checkpoint: its weights are Gaussian draws from ``default_rng(11)``, taken in
the source's order so every figure of the chapter comes out the same.
"""

from __future__ import annotations

import functools

import numpy as np

from labkit.nn import Decoder, DecoderFaults, DecoderWeights
from labkit.nn.configs import book_config

#: The token IDs every decoder lab feeds: [T] = [7].
LAB_TOKENS = (1, 5, 3, 8, 2, 9, 4)

LAB_CONFIG = book_config("lab-decoder")

#: Draw order and standard deviation of the weights (name, std); shapes come from the config.
_DRAWS = (("embedding", 0.3), ("output", 0.2))
_LAYER_DRAWS = (("q", 0.2), ("k", 0.2), ("v", 0.2), ("o", 0.2), ("gate", 0.2), ("up", 0.2), ("down", 0.2))


def lab_weights(seed: int = 11) -> DecoderWeights:
    """Weights drawn as N(0, std²) from ``default_rng(seed)``: embedding [17, 8] (std 0.3),
    output [8, 17], then per layer q, k, v, o [8, 8], gate, up [8, 12], down [12, 8] (std 0.2)."""
    shapes = LAB_CONFIG.weight_shapes()
    generator = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for name, std in _DRAWS:
        arrays[name] = generator.normal(0.0, std, shapes[name])
    for layer in range(LAB_CONFIG.n_layers):
        for name, std in _LAYER_DRAWS:
            key = f"layers.{layer}.{name}"
            arrays[key] = generator.normal(0.0, std, shapes[key])
    return DecoderWeights.from_arrays(arrays, LAB_CONFIG)


def lab_decoder(faults: DecoderFaults | str | None = None, seed: int = 11) -> Decoder:
    """The lab decoder; ``faults`` is a ``DecoderFaults`` or a fault name (None: correct)."""
    if faults is None or isinstance(faults, str):
        faults = DecoderFaults.named(faults)
    if not isinstance(faults, DecoderFaults):
        raise TypeError(f"faults must be a DecoderFaults, a fault name or None, got {type(faults).__name__}")
    return Decoder(LAB_CONFIG, _shared_weights(seed), faults)


@functools.lru_cache(maxsize=8)
def _shared_weights(seed: int) -> DecoderWeights:
    """``lab_weights(seed)``, drawn and checked once, its arrays read-only: every lab decoder
    of that seed shares them (each ``Decoder`` gets its own containers)."""
    weights = lab_weights(seed)
    for array in weights.to_arrays().values():
        array.flags.writeable = False
    return weights


def lab_tokens() -> np.ndarray:
    """The lab's token IDs as an int64 array [7]."""
    return np.array(LAB_TOKENS, dtype=np.int64)
