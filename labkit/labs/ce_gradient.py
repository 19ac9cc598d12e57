"""Lab: the gradient of cross-entropy is softmax minus one-hot, checked by finite differences.

One row of logits z = [ln 2, 0, 0] with target 2: softmax(z) = [1/2, 1/4, 1/4], so
L = −log(1/4) = ln 4 and ∂L/∂z = [1/2, 1/4, 1/4] − [0, 0, 1] = [0.5, 0.25, −0.75].
"""

from __future__ import annotations

import numpy as np

from labkit.labs.common import finite_difference, masked_cross_entropy, max_abs_difference

STEP = 1e-5
ABS_TOLERANCE = 1e-9
RELATIVE_TOLERANCE = 1e-8


def run() -> dict:
    """The ``ce_gradient`` object of the source report (loss, gradient [1, 3], check error)."""
    logits = np.array([[np.log(2.0), 0.0, 0.0]])  # [N=1, V=3]
    targets = np.array([2])
    valid = np.ones(1, dtype=bool)

    def loss_of(z: np.ndarray) -> float:
        return masked_cross_entropy(z, targets, valid)[0]

    loss, analytic = masked_cross_entropy(logits, targets, valid)
    numeric = finite_difference(loss_of, logits, step=STEP)
    if not np.allclose(analytic, numeric, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE):
        raise AssertionError(
            f"analytic and finite-difference gradients differ by {max_abs_difference(analytic, numeric):.3g}"
        )
    return {
        "loss_nat": loss,
        "gradient": analytic.tolist(),
        "finite_difference_step": STEP,
        "max_abs_gradient_error": max_abs_difference(analytic, numeric),
        "abs_tolerance": ABS_TOLERANCE,
        "relative_tolerance": RELATIVE_TOLERANCE,
    }
