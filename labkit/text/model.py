"""toy-decoder-v1 (``labkit.nn.Decoder`` with L=2, d=8, H_q=2, H_kv=1, d_h=4, V=20, float32): its
configuration, its stored weights, and the recipe that fits them (``fit_weights``, fixture recipe only):

1. every layer matrix and the embedding are drawn from a seeded normal distribution;
2. the final normalised hidden state h_t ∈ R⁸ at each of the five decision states of §7.4 (the 12
   prompt tokens, then followed by 14, 14 15, 14 15 16 and 14 15 16 17) is collected into H [5, 8];
3. a target row of 20 logits per step: the source's listed logits, every other one seeded below them;
4. the head W_out [8, 20] solves H·W_out = targets by least squares: the five states are independent
   in R⁸, so it is exact up to float32 rounding, which a correction step absorbs.

The runtime never sees the targets: it loads the stored weights and computes.
"""

from __future__ import annotations

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
#: the prompt of §7.3 and the greedy selections that lead from one decision state to the next
PROMPT_IDS = (1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6)
SELECTIONS = (14, 15, 16, 17, 18)
FIT_SEED = 20260701


def load_weights(root: str | Path | None = None) -> DecoderWeights:
    """The stored weights from ``root`` (default: ``fixtures/text``), every name, shape and value checked."""
    return DecoderWeights.from_arrays(load_arrays(fixture_dir("text", root) / WEIGHTS_FILE), CONFIG)


def load_decoder(root: str | Path | None = None) -> Decoder:
    """toy-decoder-v1 with its stored weights."""
    return Decoder(CONFIG, load_weights(root))


def _seeded_layers(rng: np.random.Generator) -> DecoderWeights:
    shapes = CONFIG.weight_shapes()
    arrays = {"embedding": rng.standard_normal(shapes["embedding"]), "output": np.zeros(shapes["output"])}
    for name, shape in shapes.items():
        if name.startswith("layers."):
            arrays[name] = rng.standard_normal(shape) / np.sqrt(shape[0])  # fan-in scaling
    return DecoderWeights.from_arrays({k: v.astype(np.float32) for k, v in arrays.items()}, CONFIG)


def target_logits(seed: int = FIT_SEED) -> np.ndarray:
    """targets [5, V]: the listed logits, seeded unlisted ones below them: at step 1 < 1.10 − 0.3 (below
    the third place), at steps 2–5 < top − 0.8."""
    rng = np.random.default_rng(seed + 1)
    rows = []
    for step, listed in SOURCE_LOGITS.items():
        ceiling = (min(listed.values()) - 0.3) if step == 1 else (max(listed.values()) - 0.8)
        row = rng.uniform(-2.5, ceiling, CONFIG.vocab_size)
        for token_id, logit in listed.items():
            row[token_id] = logit
        rows.append(row)
    return np.stack(rows)


def fit_weights(seed: int = FIT_SEED) -> tuple[DecoderWeights, dict]:
    """Seeded layers, then W_out [d, V] from H [5, d]·W_out = targets [5, V]; see module doc.
    Returns the weights and a report: the rank of H and max |logit − target|."""
    weights = _seeded_layers(np.random.default_rng(seed))
    eye = np.eye(CONFIG.width, CONFIG.vocab_size, dtype=np.float32)  # W_out = [I_d | 0]: the first d logits *are* h_t
    h = _logits_at_decision_states(weights, eye)[:, : CONFIG.width]  # H [5, d], RMSNorm(x) of the last position
    rank = int(np.linalg.matrix_rank(h))
    if rank != len(SELECTIONS):
        raise ValueError(f"decision states must be independent; rank {rank} < {len(SELECTIONS)}")
    targets = target_logits(seed)  # [5, V]
    head = np.linalg.lstsq(h, targets, rcond=None)[0]  # [d, V]
    for _ in range(2):  # absorb float32 rounding
        got = _logits_at_decision_states(weights, head.astype(np.float32))
        head = head + np.linalg.lstsq(h, targets - got, rcond=None)[0]
    fitted = DecoderWeights(embedding=weights.embedding, output=head.astype(np.float32), layers=weights.layers)
    got = _logits_at_decision_states(fitted, fitted.output)
    return fitted, {"decision_state_rank": rank, "max_abs_error_vs_targets": float(np.max(np.abs(got - targets)))}


def _logits_at_decision_states(weights: DecoderWeights, head: np.ndarray) -> np.ndarray:
    """Real float32 forward passes (prefill, then cached decodes): logits [5, V] as float64."""
    decoder = Decoder(CONFIG, DecoderWeights(weights.embedding, head, weights.layers))
    result, cache = decoder.prefill(np.asarray([PROMPT_IDS]))
    rows = [result.next_logits[0]]
    for token in SELECTIONS[:-1]:
        rows.append(decoder.decode_step([token], cache).next_logits[0])
    return np.stack(rows).astype(np.float64)


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
