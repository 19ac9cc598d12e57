"""toy-tool-decoder-v1: the book's one transformer with §7.10's configuration (L=2, d=16, H_q=4, H_kv=2,
d_h=4, V=256, float32) and fixture weights made by ``fit_weights``: seeded normal matrices, then the output
head W_out [d, V] fitted so that at every decision state s (final hidden z_s [d], target y_s, allowed A_s)

    z_s·W_out[:, y_s]  ≥  z_s·W_out[:, j] + margin     for all j ∈ A_s, j ≠ y_s

(a multiclass perceptron: 16 dimensions cannot fix every logit, only the allowed winner matters).
The runtime never fits: it loads the stored weights.
"""

from __future__ import annotations

import numpy as np

from labkit.nn import Decoder, DecoderWeights
from labkit.nn.configs import book_config

MODEL_ID = "toy-tool-decoder-v1"
CONFIG = book_config(MODEL_ID)
WEIGHTS_FILE = "toy-tool-decoder-v1.npz"
SEED = 20260719
MARGIN = 1.0


def load_decoder() -> Decoder:
    """toy-tool-decoder-v1 with its stored weights."""
    from labkit.core.fixtures import fixtures_root, load_arrays

    arrays = load_arrays(fixtures_root() / "tools" / WEIGHTS_FILE)
    return Decoder(CONFIG, DecoderWeights.from_arrays(arrays, CONFIG))


def initial_weights(seed: int = SEED) -> DecoderWeights:
    """Seeded normal weights; the output head starts as zeros (it is fitted)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in CONFIG.weight_shapes().items():
        if name == "embedding":
            arrays[name] = rng.normal(0.0, 1.0, shape)
        elif name == "output":
            arrays[name] = np.zeros(shape)
        else:
            arrays[name] = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
    return DecoderWeights.from_arrays({k: v.astype(np.float32) for k, v in arrays.items()}, CONFIG)


def final_hidden(weights: DecoderWeights, input_ids: np.ndarray) -> np.ndarray:
    """z = RMSNorm(x_L) at every position: [T, d] (read through an identity output head)."""
    probe = DecoderWeights(weights.embedding, np.eye(CONFIG.width, CONFIG.vocab_size, dtype=np.float32), weights.layers)
    logits = Decoder(CONFIG, probe).full_logits(np.asarray(input_ids).reshape(1, -1))
    return logits[0, :, : CONFIG.width].astype(np.float64)


def fit_output_head(
    states: np.ndarray, targets: np.ndarray, allowed: np.ndarray, margin: float = MARGIN, max_epochs: int = 5000
) -> np.ndarray:
    """W_out [d, V] with z_s·(w_{y_s} − w_j) ≥ margin for every allowed competitor j; states [S, d],
    targets [S], allowed [S, V] (boolean).  Raises if not separated within ``max_epochs``."""
    states = np.round(np.asarray(states, dtype=np.float64), 4)  # insensitive to last-bit BLAS noise
    n_states, width = states.shape
    w = np.zeros((width, allowed.shape[1]))
    rows = np.arange(n_states)
    for _ in range(max_epochs):
        logits = states @ w
        gap = logits[rows, targets][:, None] - logits  # [S, V]
        violated = allowed & (gap < margin)
        violated[rows, targets] = False
        if not violated.any():
            return w
        for s in np.flatnonzero(violated.any(axis=1)):
            competitors = np.flatnonzero(violated[s])
            w[:, targets[s]] += states[s] * len(competitors) / n_states
            w[:, competitors] -= states[s][:, None] / n_states
    worst = int(np.argmax(violated.sum(axis=1)))
    raise ValueError(f"output head did not separate decision state {worst} within {max_epochs} epochs")


def decision_states(weights: DecoderWeights, sequences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Teacher-forced states [S, d], targets [S], allowed [S, V] of (prompt IDs, target IDs, allowed masks)
    sequences: target t_k's state is the final hidden before it (W_out does not change it)."""
    states, targets, allowed = [], [], []
    for prompt, target, masks in sequences:
        ids = list(prompt) + list(target[:-1])
        hidden = final_hidden(weights, np.array(ids))
        states.append(hidden[len(prompt) - 1 :])
        targets += list(target)
        allowed += list(masks)
    return np.vstack(states), np.array(targets), np.array(allowed, dtype=bool)


def fit_weights(sequences, seed: int = SEED) -> DecoderWeights:
    """Seeded weights with the output head fitted to the decision states of ``sequences``."""
    weights = initial_weights(seed)
    states, targets, allowed = decision_states(weights, sequences)
    head = fit_output_head(states, targets, allowed).astype(np.float32)
    return DecoderWeights(weights.embedding, head, weights.layers)
