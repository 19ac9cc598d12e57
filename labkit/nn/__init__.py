"""The book's one transformer (``transformer``): norm, RoPE, attention, the KV cache and the decoder."""

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
