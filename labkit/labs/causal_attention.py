"""Lab: causal attention — a hand example, and why the future cannot leak into the prefix.

Hand example: one query q = [1, 0] and two keys [1, 0], [0, 1] give scores [1/√2, 0];
softmax → weights [0.6698, 0.3302]; with values [2, 0] and [0, 4] the output is
0.6698·[2, 0] + 0.3302·[0, 4] = [1.3395, 1.3210].
"""

import numpy as np

from labkit.labs.common import max_abs_difference, require_close
from labkit.nn.attention import attention, causal_allowed

#: seed of the five-token self-attention check: x ~ N(0, 1), shape [H=1, T=5, d_h=4]
PREFIX_SEED = 4
#: positions ≥ this are pushed by +100 in the perturbation check
PERTURB_FROM = 3


def hand_example() -> tuple[np.ndarray, np.ndarray]:
    """Output [2] and weights [2] of the hand example (one head, one query, two keys)."""
    q = np.array([[[1.0, 0.0]]])  # [H=1, Tq=1, d_h=2]
    k = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # [H=1, Tk=2, d_h=2]
    v = np.array([[[2.0, 0.0], [0.0, 4.0]]])  # [H=1, Tk=2, d_h=2]
    output, weights = attention(q, k, v, np.ones((1, 2), dtype=bool))
    return output[0, 0], weights[0, 0]


def prefix_check() -> dict:
    """Self-attention of a seeded x [1, 5, 4], with and without its future disturbed: both runs' outputs
    [1, 5, 4] and weights [1, 5, 5], and the mask [5, 5]."""
    x = np.random.default_rng(PREFIX_SEED).normal(size=(1, 5, 4))
    allowed = causal_allowed(np.arange(5), np.arange(5))
    output, weights = attention(x, x, x, allowed)
    disturbed = x.copy()
    disturbed[:, PERTURB_FROM:] += 100.0
    disturbed_output, disturbed_weights = attention(disturbed, disturbed, disturbed, allowed)
    return {
        "x": x,
        "allowed": allowed,
        "output": output,
        "weights": weights,
        "disturbed_output": disturbed_output,
        "disturbed_weights": disturbed_weights,
    }


def run() -> dict:
    """The ``causal_attention`` object of the source report."""
    output, weights = hand_example()
    check = prefix_check()
    prefix_error = max_abs_difference(check["output"][:, :PERTURB_FROM], check["disturbed_output"][:, :PERTURB_FROM])
    future = ~check["allowed"]  # the strict upper triangle
    upper_weight = float(np.max(np.abs(check["weights"][:, future])))
    row_sums = check["weights"].sum(axis=-1)
    require_close("attention row sums vs 1", row_sums, np.ones_like(row_sums), atol=1e-14)
    return {
        "hand_example_weights": weights.tolist(),
        "hand_example_output": output.tolist(),
        "future_perturbation_prefix_max_error": prefix_error,
        "upper_triangle_max_weight": upper_weight,
    }
