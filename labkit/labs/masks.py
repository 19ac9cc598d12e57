"""Labs 01 and 02: the gradient of cross-entropy, and which positions are supervised and which keys
each query may see.

``run_ce_gradient``: z = [ln 2, 0, 0], target 2 → softmax [1/2, 1/4, 1/4], L = ln 4 and
∂L/∂z = softmax − onehot = [0.5, 0.25, −0.75], checked by finite differences.

Three masks, three jobs: the *loss mask* picks the rows of [N, V] logits that count; in a *packed*
row prediction i (token i → i+1) counts only inside one document, and query i may attend to key j
only if j ≤ i *and* both are in the same document (document-causal); in SFT the prediction mask is
the assistant-target flags shifted left by one.
"""

import numpy as np

from labkit.labs.common import finite_difference, masked_cross_entropy, max_abs_difference, require_close
from labkit.nn.attention import causal_allowed

#: the finite-difference step of the ``ce_gradient`` check and the tolerance of every gradient check (dpo too)
STEP = 1e-5
ABS_TOLERANCE = 1e-9
RELATIVE_TOLERANCE = 1e-8
#: the seeded 3×4 case: logits from default_rng(3), targets, and the row left out of the loss
MASKED_SEED = 3
MASKED_TARGETS = (2, 1, 3)
MASKED_VALID = (True, False, True)
#: two packed four-token documents
PACKED_DOCUMENT_IDS = (0, 0, 0, 0, 1, 1, 1, 1)
#: an SFT row of 7 tokens whose original positions 4, 5, 6 are assistant targets
SFT_ASSISTANT_TARGET = (False, False, False, False, True, True, True)


def run_ce_gradient() -> dict:
    """The ``ce_gradient`` object of the source report (loss, gradient [1, 3], check error)."""
    logits = np.array([[np.log(2.0), 0.0, 0.0]])  # [N=1, V=3]
    targets = np.array([2])
    valid = np.ones(1, dtype=bool)
    loss, analytic = masked_cross_entropy(logits, targets, valid)
    numeric = finite_difference(lambda z: masked_cross_entropy(z, targets, valid)[0], logits, step=STEP)
    require_close("CE gradient vs finite differences", analytic, numeric, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE)
    return {
        "loss_nat": loss,
        "gradient": analytic.tolist(),
        "finite_difference_step": STEP,
        "max_abs_gradient_error": max_abs_difference(analytic, numeric),
        "abs_tolerance": ABS_TOLERANCE,
        "relative_tolerance": RELATIVE_TOLERANCE,
    }


def _as_document_ids(document_ids) -> np.ndarray:
    ids = np.asarray(document_ids)
    if ids.ndim != 1 or ids.size < 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"document_ids must be a non-empty [T] integer array, got {ids.dtype}{list(ids.shape)}")
    return ids


def packing_prediction_mask(document_ids) -> np.ndarray:
    """[T] document IDs → [T−1] booleans: prediction i (token i → token i+1) stays in one document."""
    ids = _as_document_ids(document_ids)
    return ids[1:] == ids[:-1]


def document_causal_allowed(document_ids) -> np.ndarray:
    """[T] document IDs → allowed [T, T]: key j ≤ query i and both in the same document."""
    ids = _as_document_ids(document_ids)
    position = np.arange(ids.size)
    same_document = ids[np.newaxis, :] == ids[:, np.newaxis]
    return causal_allowed(position, position) & same_document


def sft_prediction_mask(assistant_target) -> np.ndarray:
    """[T] assistant-target flags on token positions → [T−1] flags on prediction positions: prediction i is
    supervised when token i+1 is an assistant target."""
    flags = np.asarray(assistant_target)
    if flags.ndim != 1 or flags.size < 2 or flags.dtype != np.bool_:
        raise ValueError(
            f"assistant_target must be a [T] boolean array with T >= 2, got {flags.dtype}{list(flags.shape)}"
        )
    return flags[1:].copy()


def masked_case() -> dict:
    """The seeded 3×4 loss-mask case: logits [3, 4], loss, gradient [3, 4] and its check."""
    logits = np.random.default_rng(MASKED_SEED).normal(size=(3, 4))
    targets = np.array(MASKED_TARGETS)
    valid = np.array(MASKED_VALID)
    loss, gradient = masked_cross_entropy(logits, targets, valid)
    numeric = finite_difference(lambda z: masked_cross_entropy(z, targets, valid)[0], logits)
    # Any logits on the unsupervised row leave the loss untouched.
    disturbed = logits.copy()
    masked_row = int(np.flatnonzero(~valid)[0])
    disturbed[masked_row] = [100.0, -100.0, 0.0, 0.0]
    disturbed_loss = masked_cross_entropy(disturbed, targets, valid)[0]
    return {
        "logits": logits,
        "targets": targets,
        "valid": valid,
        "masked_row": masked_row,
        "loss": loss,
        "gradient": gradient,
        "numeric_gradient": numeric,
        "disturbed_loss": disturbed_loss,
    }


def run() -> dict:
    """The ``masks`` object of the source report."""
    case = masked_case()
    gradient, numeric = case["gradient"], case["numeric_gradient"]
    require_close(
        "masked CE gradient vs finite differences", gradient, numeric, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE
    )
    sft_positions = np.flatnonzero(sft_prediction_mask(np.array(SFT_ASSISTANT_TARGET)))
    return {
        "masked_loss_nat": case["loss"],
        "masked_row_gradient": gradient[case["masked_row"]].tolist(),
        "max_abs_gradient_error": max_abs_difference(gradient, numeric),
        "packing_prediction_mask": packing_prediction_mask(PACKED_DOCUMENT_IDS).astype(int).tolist(),
        "packing_attention_allowed": document_causal_allowed(PACKED_DOCUMENT_IDS).astype(int).tolist(),
        "sft_prediction_positions": sft_positions.tolist(),
        "masked_logits_perturbation_delta": abs(case["disturbed_loss"] - case["loss"]),
    }
