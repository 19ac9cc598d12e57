"""Exercise of lab 01: the masked cross-entropy gradient."""

from __future__ import annotations

import numpy as np

from labkit.check._support import ATOL, failure_at, first_bad_index, not_finite
from labkit.check.core import CheckResult, call, exercise, failure, numeric_array, passed


def _ce_cases() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from labkit.labs import masks

    many = np.random.default_rng(2026).normal(0.0, 2.0, size=(5, 6))
    return {
        "the lab's row z = [ln 2, 0, 0], target 2": (
            np.array([[np.log(2.0), 0.0, 0.0]]),
            np.array([2]),
            np.array([True]),
        ),
        "the seeded [3, 4] batch, row 1 left out of the loss": (
            np.random.default_rng(masks.MASKED_SEED).normal(size=(3, 4)),
            np.array(masks.MASKED_TARGETS),
            np.array(masks.MASKED_VALID),
        ),
        "logits in the thousands": (
            np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]),
            np.array([0, 2]),
            np.array([True, True]),
        ),
        "a [5, 6] batch with only rows 1 and 4 supervised": (
            many,
            np.array([0, 5, 2, 3, 1]),
            np.array([False, True, False, False, True]),
        ),
    }


def _ce_reference(logits, targets, valid) -> np.ndarray:
    from labkit.labs.common import masked_cross_entropy

    return masked_cross_entropy(logits, targets, valid)[1]


@exercise(
    "masked_ce_gradient",
    page="notebooks/11-labs/01-cross-entropy-gradient.md",
    signature=("logits", "targets", "valid"),
    kind="extend",
    idea=(
        "the gradient of cross-entropy with respect to the logits compares what the model predicts with what "
        "was right, and only supervised rows count"
    ),
)
def masked_ce_gradient(candidate) -> CheckResult:
    """return ∂L/∂logits [N, V] of the mean cross-entropy over the supervised rows (logits [N, V]
    float, targets [N] int, valid [N] bool)"""
    for case, (logits, targets, valid) in _ce_cases().items():
        expected = _ce_reference(logits, targets, valid)
        got = numeric_array(
            call(candidate, logits.copy(), targets.copy(), valid.copy()), "the gradient", expected.shape
        )
        failed = not_finite(
            got,
            expected,
            what="gradient",
            case=case,
            rule="every entry is a finite number",
            hint="exp(1000) overflows; softmax does not change when the same number is "
            "subtracted from every logit of a row, so shift each row by its largest logit first",
        )
        if failed is not None:
            return failed
        for row in np.flatnonzero(~valid):
            bad = first_bad_index(got[row], expected[row])
            if bad is not None:
                return failure(
                    "a row outside the loss has a gradient",
                    where=f"case “{case}”, gradient[{row}, {bad[0]}] (row {row} is not supervised)",
                    rule="an unsupervised row has exactly zero gradient",
                    got=got[row][bad].item(),
                    expected=0.0,
                    hint="the mask takes the row out of the loss, so none of its logits can change "
                    "the loss: its whole gradient row must be zero",
                )
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        supervised = int(valid.sum())
        kept = valid[:, None]
        if np.allclose(got, -expected, atol=ATOL, rtol=0.0):
            hint = (
                "the sign is flipped: raising the target's logit lowers the loss, so its entry is p_y − 1 < 0, "
                "and every other entry p_i is positive"
            )
        elif supervised != valid.size and np.allclose(got, expected * supervised / valid.size, atol=ATOL, rtol=0.0):
            hint = (
                f"the loss is a mean over the {supervised} supervised rows, not over all {valid.size} rows: "
                "divide by the number of rows the mask keeps"
            )
        elif np.allclose(got * kept, expected * supervised, atol=ATOL, rtol=0.0):
            hint = (
                f"L is a mean over the {supervised} supervised rows, so each row's gradient "
                f"carries a factor 1/{supervised}"
            )
        elif not np.allclose(got.sum(axis=1), 0.0, atol=1e-9, rtol=0.0):
            hint = (
                "each supervised row is a probability vector minus a one-hot vector, so it sums to zero; "
                "yours does not — check the softmax and the −1 at the target"
            )
        else:
            hint = (
                "per supervised row: the softmax of its logits minus one at the target, "
                "then the factor of the mean over supervised rows"
            )
        return failure_at(
            "the gradient differs from ∂L/∂z",
            got,
            expected,
            bad,
            where=f"case “{case}”, gradient{list(bad)}",
            rule="∂L/∂z_n = valid_n · (softmax(z_n) − onehot(y_n)) / M (within 1e-12)",
            hint=hint,
        )
    return passed(f"all {len(_ce_cases())} batches match, including the lab's [0.5, 0.25, −0.75]")
