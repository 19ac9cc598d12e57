"""The book's three decoders side by side: the lab's is multi-head (H_kv = H_q) in float64, the two
traces' use grouped-query attention in float32; all keep RoPE base 10000 and RMSNorm eps 1e-6."""

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
