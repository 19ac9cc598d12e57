"""The book's one transformer: norm, RoPE, attention, the KV cache and the decoder.

Every decoder of the book is this code with another configuration and other weights:
the chapter-11 lab decoder (float64, multi-head), toy-decoder-v1 of trace one and
toy-tool-decoder-v1 of trace three (float32, grouped-query attention).
"""

from labkit.nn.attention import attention, causal_allowed
from labkit.nn.cache import KVCache
from labkit.nn.norm import rms_norm
from labkit.nn.rope import rope
from labkit.nn.transformer import Decoder, DecoderConfig, DecoderFaults, DecoderWeights

__all__ = [
    "Decoder",
    "DecoderConfig",
    "DecoderFaults",
    "DecoderWeights",
    "KVCache",
    "attention",
    "causal_allowed",
    "rms_norm",
    "rope",
]
