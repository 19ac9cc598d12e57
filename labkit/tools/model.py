"""toy-tool-decoder-v1: the book's one transformer with §7.10's configuration (L=2, d=16, H_q=4, H_kv=2,
d_h=4, V=256, float32) and its fixture weights, made by the book's recipe (``booktools/recipes/tools.py``):
seeded normal matrices, then the output head W_out [d, V] fitted so that at every decision state s (final
hidden z_s [d], target y_s, allowed A_s)

    z_s·W_out[:, y_s]  ≥  z_s·W_out[:, j] + margin     for all j ∈ A_s, j ≠ y_s

(a multiclass perceptron: 16 dimensions cannot fix every logit, only the allowed winner matters).
The runtime never fits: it loads the stored weights.
"""

from labkit.core.fixtures import fixture_dir, load_arrays
from labkit.nn import Decoder, DecoderWeights
from labkit.nn.configs import book_config

MODEL_ID = "toy-tool-decoder-v1"
CONFIG = book_config(MODEL_ID)
WEIGHTS_FILE = "toy-tool-decoder-v1.npz"


def load_decoder() -> Decoder:
    """toy-tool-decoder-v1 with its stored weights."""
    arrays = load_arrays(fixture_dir("tools") / WEIGHTS_FILE)
    return Decoder(CONFIG, DecoderWeights.from_arrays(arrays, CONFIG))
