"""Exercise of lab 01: the masked cross-entropy gradient, on the lab's row and batches."""

from __future__ import annotations

import numpy as np

from labkit.check.grading import function


def _ce_cases():
    from labkit.labs import masks

    many = np.random.default_rng(2026).normal(0.0, 2.0, size=(5, 6))
    return [
        (
            "the lab's row z = [ln 2, 0, 0], target 2",
            (np.array([[np.log(2.0), 0.0, 0.0]]), np.array([2]), np.array([True])),
        ),
        (
            "the seeded [3, 4] batch, row 1 left out of the loss",
            (
                np.random.default_rng(masks.MASKED_SEED).normal(size=(3, 4)),
                np.array(masks.MASKED_TARGETS),
                np.array(masks.MASKED_VALID),
            ),
        ),
        (
            "logits in the thousands",
            (np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]), np.array([0, 2]), np.array([True, True])),
        ),
        (
            "a [5, 6] batch with only rows 1 and 4 supervised",
            (many, np.array([0, 5, 2, 3, 1]), np.array([False, True, False, False, True])),
        ),
    ]


def _ce_reference(logits, targets, valid) -> np.ndarray:
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(logits, targets, valid)[1]


function(
    "masked_ce_gradient",
    "notebooks/11-labs/01-cross-entropy-gradient.md",
    "derive",
    "derive and return ∂L/∂logits [N, V] of the mean cross-entropy over the supervised rows (logits [N, V] "
    "float, targets [N] int, valid [N] bool); the page shows the loss, not its gradient",
    ("logits", "targets", "valid"),
    _ce_cases,
    _ce_reference,
    idea="the gradient of cross-entropy with respect to the logits compares what the model predicts with "
    "what was right, and only supervised rows count",
    outputs=("gradient",),
    rule="the mean runs over the supervised rows only; a row the mask leaves out has no gradient at all; "
    "exp of a logit in the thousands overflows unless the row is shifted first",
)
