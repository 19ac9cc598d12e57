"""toy-tokenizer-v1 (20 IDs): whole ``<tag>`` specials, greedy longest match, IDs back to UTF-8 bytes.

Specials without a tag (§7.2's ``EOS`` and ``reserved``) no text encodes to; text no piece covers is an
error (no byte fallback).  The variant ``toy-tokenizer-v1-split`` (issue 45) stores some pieces as bytes
that end or begin inside a character, as a byte-level BPE does, used in decoding only.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np

from labkit.core.fixtures import fixture_dir, read_json


@dataclass(frozen=True)
class Encoding:
    """The three input tensors of a batch of one prompt, each ``[1, m]`` int64."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    position_ids: np.ndarray

    @property
    def length(self) -> int:
        """m, the number of valid (unmasked) prompt tokens."""
        return int(self.attention_mask.sum())


class Tokenizer:
    """A vocabulary ``pieces[id]`` plus the set of special IDs."""

    def __init__(self, tokenizer_id: str, pieces: list[str | bytes], special_ids: list[int]):
        if len(set(pieces)) != len(pieces):
            raise ValueError(f"tokenizer {tokenizer_id}: pieces must be distinct")
        self.tokenizer_id = tokenizer_id
        self.pieces = list(pieces)
        self.special_ids = frozenset(special_ids)
        self._id_of = {piece: i for i, piece in enumerate(pieces)}
        plain = [p for i, p in enumerate(pieces) if i not in self.special_ids and isinstance(p, str)]
        self._plain = sorted(plain, key=len, reverse=True)  # longest first: the first match is the longest

    @classmethod
    def load(cls, root: str | Path | None = None, name: str = "tokenizer.json") -> Self:
        """Load the vocabulary file ``name`` from ``root`` (default: ``fixtures/text/tokenizer.json``)."""
        data = read_json(fixture_dir("text", root) / name)
        try:
            vocab = sorted(data["vocab"], key=lambda e: e["id"])
            pieces = [bytes.fromhex(e["utf8_hex"]) if "utf8_hex" in e else e["piece"] for e in vocab]
            if [e["id"] for e in vocab] != list(range(len(vocab))):
                raise ValueError("tokenizer vocab ids must be 0, 1, …, V−1 without gaps")
            special = [e["id"] for e in vocab if e.get("special")]
            return cls(data["tokenizer_id"], pieces, special)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"tokenizer file lacks or mangles the field {exc}") from None

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def encode(self, text: str) -> list[int]:
        """Text → IDs: whole ``<tag>`` specials first, else the longest matching piece."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, got {type(text).__name__}")
        ids: list[int] = []
        i = 0
        while i < len(text):
            if text[i] == "<":
                end = text.find(">", i)
                tag = text[i : end + 1] if end >= 0 else ""
                if tag and self._id_of.get(tag) in self.special_ids:
                    ids.append(self._id_of[tag])
                    i = end + 1
                    continue
            piece = next((p for p in self._plain if text.startswith(p, i)), None)
            if piece is None:
                raise ValueError(
                    f"{self.tokenizer_id} cannot encode {text[i]!r} at character {i} of "
                    f"{text!r}: no piece of the 20-entry vocabulary starts with it "
                    "(the toy tokenizer has no unknown token and no byte fallback)"
                )
            ids.append(self._id_of[piece])
            i += len(piece)
        return ids

    def encode_batch_of_one(self, text: str) -> Encoding:
        """The source's three tensors for one prompt: IDs, an all-ones mask, positions 0…m−1."""
        ids = np.asarray([self.encode(text)], dtype=np.int64)  # [1, m]
        mask = np.ones_like(ids)  # [1, m]
        positions = np.cumsum(mask, axis=1) - 1  # [1, m]
        return Encoding(ids, mask, positions)

    def piece_bytes(self, token_id: int, encoding: str = "utf-8") -> bytes:
        """One token's bytes (a byte piece is its bytes; ``encoding``: a broken detokenizer's codec)."""
        if not 0 <= int(token_id) < self.vocab_size:
            raise ValueError(f"token_id must be in [0, {self.vocab_size}), got {token_id}")
        piece = self.pieces[int(token_id)]
        return piece if isinstance(piece, bytes) else piece.encode(encoding)

    @property
    def splits_characters(self) -> bool:
        """Some piece is bytes that end or begin inside a UTF-8 character."""
        return any(isinstance(p, bytes) for p in self.pieces)
