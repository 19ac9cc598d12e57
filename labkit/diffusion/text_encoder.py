"""toy-text-encoder-v2: a word-piece tokenizer and a 768-wide text encoder (source §7.7).

Tokenizer: greedy longest match over a small fixed vocabulary (``<pad>`` = 0, ``<unk>`` = 1), padded
with ``<pad>`` to ``max_length`` = 12 IDs (the empty negative prompt is twelve ``<pad>``).

Encoder, for IDs x [B, 12]:

    h = E[x] + P          E: token embeddings [V, 768], P: position embeddings [12, 768]
    c = RMSNorm(h)        c: [B, 12, 768], float32

A word that names a concept the toy denoiser can draw (rain, night, station, bench, umbrella,
documentary) is embedded along that concept's direction; other words and ``<pad>`` point anywhere.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from labkit.core.fixtures import fixture_dir, load_arrays, read_json
from labkit.core.guards import token_ids
from labkit.nn import rms_norm

TEXT_ENCODER_ID = "toy-text-encoder-v2"
TOKENIZER_ID = "toy-text-tokenizer-v2"
PAD, UNK = "<pad>", "<unk>"


@dataclass(frozen=True)
class Tokenizer:
    """Greedy longest-match tokenizer; ``vocab[i]`` is the string of ID ``i``."""

    vocab: tuple[str, ...]
    max_length: int = 12

    def __post_init__(self):
        if self.vocab[:2] != (PAD, UNK):
            raise ValueError(f"vocab must start with {PAD!r}, {UNK!r}; got {self.vocab[:2]}")
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError("vocab entries must be unique")

    def pieces(self, text: str) -> list[str]:
        """Split ``text`` into vocabulary pieces, longest match first; unknown characters → <unk>."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        longest_first = sorted((p for p in self.vocab if p), key=len, reverse=True)
        out, i = [], 0
        while i < len(text):
            piece = next((p for p in longest_first if text.startswith(p, i)), None)
            out.append(piece or UNK)
            i += len(piece) if piece else 1
        return out

    def encode(self, text: str) -> np.ndarray:
        """IDs of ``text`` padded with <pad> to ``max_length``: int64 [max_length]."""
        ids = [self.vocab.index(p) for p in self.pieces(text)]
        if len(ids) > self.max_length:
            raise ValueError(
                f"text has {len(ids)} tokens but {TEXT_ENCODER_ID} holds at most {self.max_length}: {text!r}"
            )
        return np.array(ids + [0] * (self.max_length - len(ids)), dtype=np.int64)  # <pad> = 0


@dataclass(frozen=True)
class TextEncoder:
    """Token embeddings E [V, 768] and position embeddings P [12, 768], float32."""

    tokenizer: Tokenizer
    token_embedding: np.ndarray
    position_embedding: np.ndarray
    encoder_id: str = TEXT_ENCODER_ID

    def __post_init__(self):
        v, d = self.token_embedding.shape
        if v != len(self.tokenizer.vocab):
            raise ValueError(f"token_embedding has {v} rows but the vocabulary has {len(self.tokenizer.vocab)}")
        if self.position_embedding.shape != (self.tokenizer.max_length, d):
            raise ValueError(
                f"position_embedding must be [{self.tokenizer.max_length}, {d}], "
                f"got {list(self.position_embedding.shape)}"
            )

    def encode_ids(self, ids) -> np.ndarray:
        """c = RMSNorm(E[x] + P): IDs int [B, 12] → embeddings float32 [B, 12, 768]."""
        ids = token_ids("ids", ids, len(self.tokenizer.vocab))
        if ids.ndim != 2 or ids.shape[1] != self.tokenizer.max_length:
            raise ValueError(f"ids must have shape [B, {self.tokenizer.max_length}], got {list(ids.shape)}")
        hidden = self.token_embedding[ids].astype(np.float64) + self.position_embedding.astype(np.float64)
        return rms_norm(hidden).astype(np.float32)

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [1, 12], embedding float32 [1, 12, 768]) of one prompt."""
        ids = self.tokenizer.encode(text)[None, :]
        return ids, self.encode_ids(ids)


def load_text_encoder(root: str | Path | None = None) -> TextEncoder:
    """Load toy-text-encoder-v2 from ``root`` (default: ``fixtures/diffusion``)."""
    folder = fixture_dir("diffusion", root)
    meta = read_json(folder / f"{TEXT_ENCODER_ID}.json")
    arrays = load_arrays(folder / f"{TEXT_ENCODER_ID}.npz")
    tokenizer = Tokenizer(tuple(meta["vocab"]), int(meta["max_length"]))
    return TextEncoder(tokenizer, arrays["token_embedding"], arrays["position_embedding"])
