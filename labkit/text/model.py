"""toy-decoder-v1 (``labkit.nn.Decoder`` with L=2, d=8, H_q=2, H_kv=1, d_h=4, V=20, float32): its
configuration and its stored weights, fitted by the book's fixture recipe (``booktools/recipes/text.py``):

1. every layer matrix and the embedding are drawn from a seeded normal distribution;
2. the final normalised hidden state h_t ∈ R⁸ at each of the five decision states of §7.4 (the 12
   prompt tokens, then followed by 14, 14 15, 14 15 16 and 14 15 16 17) is collected into H [5, 8];
3. a target row of 20 logits per step: the source's listed logits, every other one seeded below them;
4. the head W_out [8, 20] solves H·W_out = targets by least squares: the five states are independent
   in R⁸, so it is exact up to float32 rounding, which a correction step absorbs.

The runtime never sees the targets: it loads the stored weights and computes.
"""

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from labkit.core.fixtures import fixture_dir, load_arrays
from labkit.nn import Decoder, DecoderWeights
from labkit.nn.configs import book_config

CONFIG = book_config("toy-decoder-v1")
WEIGHTS_FILE = "toy-decoder-v1.npz"

#: §7.2–7.4: the raw logits the source lists at each selection step t, {token ID: logit} (read-only:
#: pages 02 and 03 compare the run with it)
SOURCE_LOGITS = MappingProxyType(
    {
        1: MappingProxyType({14: 4.20, 15: 3.80, 17: 1.10}),
        2: MappingProxyType({15: 5.00}),
        3: MappingProxyType({16: 4.70}),
        4: MappingProxyType({17: 5.30}),
        5: MappingProxyType({18: 6.00}),
    }
)
#: the prompt of §7.3
PROMPT_IDS = (1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6)


def load_weights(root: str | Path | None = None) -> DecoderWeights:
    """The stored weights from ``root`` (default: ``fixtures/text``), every name, shape and value checked."""
    return DecoderWeights.from_arrays(load_arrays(fixture_dir("text", root) / WEIGHTS_FILE), CONFIG)


def load_decoder(root: str | Path | None = None) -> Decoder:
    """toy-decoder-v1 with its stored weights."""
    return Decoder(CONFIG, load_weights(root))


@dataclass(frozen=True)
class WeightPerturbation:
    """Add ``delta`` to one entry of one stored weight (a fault: a bad checkpoint)."""

    name: str
    index: tuple[int, ...]
    delta: float

    def apply(self, weights: DecoderWeights) -> DecoderWeights:
        arrays = {k: v.copy() for k, v in weights.to_arrays().items()}
        if self.name not in arrays:
            raise ValueError(f"weight_perturbation.name must be one of {sorted(arrays)}, got {self.name!r}")
        target = arrays[self.name]
        if len(self.index) != target.ndim or not all(0 <= i < n for i, n in zip(self.index, target.shape, strict=True)):
            raise ValueError(
                f"weight_perturbation.index must address {self.name} of shape "
                f"{list(target.shape)}, got {list(self.index)}"
            )
        target[self.index] += np.float32(self.delta)
        return DecoderWeights.from_arrays(arrays, CONFIG)
