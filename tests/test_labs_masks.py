"""Masks lab: masked loss, packing masks, document-causal attention, SFT shift; the mask viewer."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import masks
from labkit.labs.masks import document_causal_allowed, packing_prediction_mask, sft_prediction_mask

SOURCE_MASKED_LOSS = 2.814172747868162
SOURCE_PACKING_ALLOWED = [
    [1, 0, 0, 0, 0, 0, 0, 0],
    [1, 1, 0, 0, 0, 0, 0, 0],
    [1, 1, 1, 0, 0, 0, 0, 0],
    [1, 1, 1, 1, 0, 0, 0, 0],
    [0, 0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, 1, 1, 0, 0],
    [0, 0, 0, 0, 1, 1, 1, 0],
    [0, 0, 0, 0, 1, 1, 1, 1],
]


@pytest.fixture(scope="module")
def report():
    return masks.run()


def test_masked_loss_matches_source(report):
    loss = report["masked_loss_nat"]
    assert loss == pytest.approx(SOURCE_MASKED_LOSS, rel=1e-12), (
        f"masked loss {loss!r} differs from the source's {SOURCE_MASKED_LOSS!r} by {abs(loss - SOURCE_MASKED_LOSS):.3g}"
    )
    assert 0.0 < report["max_abs_gradient_error"] < 1e-9, f"gradient check error {report['max_abs_gradient_error']:.3g}"


def test_masked_row_has_zero_gradient_and_its_logits_change_nothing(report):
    assert report["masked_row_gradient"] == [0.0, 0.0, 0.0, 0.0], f"masked row gradient {report['masked_row_gradient']}"
    assert report["masked_logits_perturbation_delta"] == 0.0
    case = masks.masked_case()
    assert case["disturbed_loss"] == case["loss"], (
        f"loss moved by {abs(case['disturbed_loss'] - case['loss']):.3g} when the masked row changed"
    )


def test_supervising_the_masked_row_changes_the_loss():
    case = masks.masked_case()
    from labkit.labs.common import masked_cross_entropy

    everything = np.ones(3, dtype=bool)
    loss_all, _ = masked_cross_entropy(case["logits"], case["targets"], everything)
    assert abs(loss_all - case["loss"]) > 1e-3, "the loss mask must matter: all-rows loss equals masked loss"


def test_packing_masks_match_source(report):
    assert report["packing_prediction_mask"] == [1, 1, 1, 0, 1, 1, 1]
    assert report["packing_attention_allowed"] == SOURCE_PACKING_ALLOWED
    assert report["sft_prediction_positions"] == [3, 4, 5]


def test_report_keys_match_source_schema(report):
    assert list(report) == [
        "masked_loss_nat",
        "masked_row_gradient",
        "max_abs_gradient_error",
        "packing_prediction_mask",
        "packing_attention_allowed",
        "sft_prediction_positions",
        "masked_logits_perturbation_delta",
    ]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=10))
def test_document_causal_allowed_is_causal_and_within_documents(ids):
    ids = np.array(sorted(ids))  # packed documents are contiguous
    allowed = document_causal_allowed(ids)
    t = ids.size
    for i in range(t):
        for j in range(t):
            expected = j <= i and ids[i] == ids[j]
            assert allowed[i, j] == expected, f"allowed[{i}, {j}] = {allowed[i, j]} for documents {ids.tolist()}"
    assert allowed.diagonal().all(), "every query must see itself, so no row is empty"
    boundary = packing_prediction_mask(ids)
    assert boundary.tolist() == [bool(ids[i] == ids[i + 1]) for i in range(t - 1)]


def test_sft_targets_shift_left_by_one():
    flags = np.array([False, False, True, True])
    assert sft_prediction_mask(flags).tolist() == [False, True, True]


@pytest.mark.parametrize(
    ("fn", "arg", "message"),
    [
        (document_causal_allowed, np.array([0.5, 1.0]), "document_ids must be a non-empty"),
        (packing_prediction_mask, np.zeros((2, 2), dtype=int), "document_ids must be a non-empty"),
        (sft_prediction_mask, np.array([1, 0, 1]), "assistant_target must be a"),
        (sft_prediction_mask, np.array([True]), "with T >= 2"),
    ],
)
def test_bad_mask_input_names_the_argument(fn, arg, message):
    with pytest.raises(ValueError, match=message):
        fn(arg)
