"""The mask editor's data (lab 02): for every one of the 2⁷ splits of a packed row of eight tokens into
documents and the 2⁸ choices of assistant targets, the masks ``labkit.labs.masks`` computes.  A split is
7 bits (bit i: a new document starts after token i), targets 8 bits (bit j: token j is a target), a
prediction mask 7 bits (bit i: prediction i → i+1 is supervised).

    data = {"player": "mask_editor", "title", "tokens": 8, "presets": {name: [split, targets]}, "names",
            "start": name, "ids": [128 × [8]], "allowed": [128 × [8 row bitmasks]], "packing": [128 bitmasks],
            "sft": [256 bitmasks], "prediction": hex string, two digits per (split · 256 + targets)}
"""

import numpy as np

from labkit.labs import masks
from labkit.reader.players.data import words

T = 8


def bits(flags) -> int:
    return sum(1 << i for i, on in enumerate(flags) if on)


def document_ids(split: int) -> np.ndarray:
    """Document IDs [T] of a split (bit i: a new document starts after token i)."""
    return np.cumsum([0] + [(split >> i) & 1 for i in range(T - 1)])


def targets(choice: int) -> np.ndarray:
    return np.array([bool((choice >> j) & 1) for j in range(T)])


def static_data() -> dict:
    splits, choices = range(2 ** (T - 1)), range(2**T)
    packing = [bits(masks.packing_prediction_mask(document_ids(s))) for s in splits]
    sft = [bits(masks.sft_prediction_mask(targets(c))) for c in choices]
    packed = bits(np.diff(masks.PACKED_DOCUMENT_IDS) != 0)
    sft_case = [False] + list(masks.SFT_ASSISTANT_TARGET)  # the source's SFT row, one token longer
    names = [
        words("two packed documents, every token a target", "两个打包的文档，每个 token 都是目标"),
        words("one document, assistant tokens 5–7 the targets", "一个文档，助手 token 5–7 是目标"),
        words("packed documents, assistant tokens the targets", "打包的文档，助手 token 是目标"),
    ]
    presets = [[packed, 2**T - 1], [0, bits(sft_case)], [packed, bits(sft_case)]]
    return {
        "title": words("Masks of one packed row (lab 02)", "一个打包行的 mask（实验 02）"),
        "tokens": T,
        "presets": {name["en"]: preset for name, preset in zip(names, presets, strict=True)},
        "names": {name["en"]: name for name in names},
        "start": names[0]["en"],
        "ids": [document_ids(s).tolist() for s in splits],
        "allowed": [[bits(row) for row in masks.document_causal_allowed(document_ids(s))] for s in splits],
        "packing": packing,
        "sft": sft,
        # supervised = same document (packing) and a target next token (SFT), both masks' own rule
        "prediction": "".join(f"{p & q:02x}" for p in packing for q in sft),
    }
