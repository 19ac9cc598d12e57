"""The book's decoders: one transformer, three configurations, side by side.

The chapter-11 lab decoder is multi-head and float64 (H_kv = H_q); the two trace models,
toy-decoder-v1 (trace one) and toy-tool-decoder-v1 (trace three), use grouped-query
attention in float32.  Every one uses RoPE base 10000 and RMSNorm eps 1e-6.
"""

from __future__ import annotations

from labkit.nn.transformer import DecoderConfig

#: model ID → DecoderConfig(model ID, V, d, L, H_q, H_kv, d_h, FFN width, dtype)
BOOK_DECODERS = {
    "lab-decoder": DecoderConfig("lab-decoder", 17, 8, 2, 2, 2, 4, 12, "float64"),
    "toy-decoder-v1": DecoderConfig("toy-decoder-v1", 20, 8, 2, 2, 1, 4, 16, "float32"),
    "toy-tool-decoder-v1": DecoderConfig("toy-tool-decoder-v1", 256, 16, 2, 4, 2, 4, 32, "float32"),
}


def book_config(model_id: str) -> DecoderConfig:
    """The configuration of one of the book's decoders, by its model ID."""
    if model_id not in BOOK_DECODERS:
        raise ValueError(f"unknown decoder {model_id!r}; the book's decoders are {sorted(BOOK_DECODERS)}")
    return BOOK_DECODERS[model_id]
