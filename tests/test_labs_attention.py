"""Causal attention lab: the hand example, the future cannot reach the prefix; the attention heatmap."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import causal_attention
from labkit.nn.attention import attention, causal_allowed

SOURCE_WEIGHTS = [0.6697615493266569, 0.3302384506733431]
SOURCE_OUTPUT = [1.3395230986533138, 1.3209538026933725]


def _far(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def test_hand_example_matches_source():
    report = causal_attention.run()
    assert _far(report["hand_example_weights"], SOURCE_WEIGHTS) <= 1e-15, (
        f"weights {report['hand_example_weights']} vs source {SOURCE_WEIGHTS}: "
        f"off by {_far(report['hand_example_weights'], SOURCE_WEIGHTS):.3g}"
    )
    assert _far(report["hand_example_output"], SOURCE_OUTPUT) <= 1e-15, (
        f"output {report['hand_example_output']} vs source {SOURCE_OUTPUT}: "
        f"off by {_far(report['hand_example_output'], SOURCE_OUTPUT):.3g}"
    )
    # weights = softmax([1/√2, 0]) by hand
    by_hand = np.exp([1 / np.sqrt(2), 0.0]) / np.exp([1 / np.sqrt(2), 0.0]).sum()
    assert _far(report["hand_example_weights"], by_hand) <= 1e-15


def test_future_perturbation_leaves_prefix_exactly_unchanged():
    report = causal_attention.run()
    assert report["future_perturbation_prefix_max_error"] == 0.0
    assert report["upper_triangle_max_weight"] == 0.0
    check = causal_attention.prefix_check()
    # the perturbation does reach the positions it touched
    assert _far(check["output"][:, 3:], check["disturbed_output"][:, 3:]) > 1.0


def test_without_the_mask_the_future_leaks():
    check = causal_attention.prefix_check()
    everything = np.ones((5, 5), dtype=bool)
    x, disturbed = check["x"], check["x"].copy()
    disturbed[:, 3:] += 100.0
    leak = _far(
        attention(x, x, x, everything)[0][:, :3], attention(disturbed, disturbed, disturbed, everything)[0][:, :3]
    )
    assert leak > 1.0, f"an unmasked prefix should move when the future moves, moved only {leak:.3g}"


def test_row_with_no_allowed_key_is_a_clear_error():
    q = np.zeros((1, 2, 2))
    allowed = np.array([[True, False], [False, False]])
    with pytest.raises(ValueError, match="row 1 has none"):
        attention(q, q, q, allowed)


def test_report_keys_match_source_schema():
    assert list(causal_attention.run()) == [
        "hand_example_weights",
        "hand_example_output",
        "future_perturbation_prefix_max_error",
        "upper_triangle_max_weight",
    ]


# ---- the attention heatmap -------------------------------------------------------------
def test_heatmap_default_state_is_causal_rectangle():
    from labkit.labs.lab_decoder import attention_state

    state = attention_state()
    assert state.weights.shape == (2, 4, 7), f"heads × new queries × keys, got {state.weights.shape}"
    assert state.query_positions.tolist() == [3, 4, 5, 6]
    assert np.all(state.weights[:, ~state.allowed] == 0.0), "blocked keys must carry zero weight"
    assert np.allclose(state.weights.sum(axis=-1), 1.0, atol=1e-14)
    # bottom-right aligned: query at position p sees exactly p + 1 keys
    assert state.allowed.sum(axis=1).tolist() == [4, 5, 6, 7]


def test_heatmap_rows_match_the_full_pass():
    from labkit.labs.lab_decoder import attention_state, lab_decoder, lab_tokens

    full = lab_decoder().forward(lab_tokens()[None, :], keep_attention=True)
    state = attention_state(cached=3, mask="causal", layer=1)
    gap = _far(full.layers[1].attention_weights[0, :, 3:, :], state.weights)
    assert gap < 1e-12, f"cached-step attention vs full-pass attention rows differ by {gap:.3g}"


def test_rectangular_toggle_changes_weights_only_when_the_rectangle_is_not_square():
    from labkit.labs.lab_decoder import attention_state

    causal = attention_state().weights
    rect = attention_state(mask="top-left rectangular")
    assert rect.allowed.sum(axis=1).tolist() == [1, 2, 3, 4], "top-left: query row r sees r + 1 keys"
    assert rect.weights[:, 0, 0].tolist() == [1.0, 1.0], "the first new query sees only key 0"
    assert _far(causal, rect.weights) > 0.1
    square_causal = attention_state(cached=0, mask="causal").weights
    square_rect = attention_state(cached=0, mask="top-left rectangular").weights
    assert _far(square_causal, square_rect) == 0.0, "with nothing cached both masks are the same triangle"
    assert attention_state(layer=1).layer == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cached": 7}, r"cached must be an integer in \[0, 6\]"),
        ({"mask": "full"}, "mask must be one of"),
        ({"layer": 2}, r"layer must be in \[0, 1\], got 2"),
    ],
)
def test_heatmap_bad_input_names_the_argument(kwargs, message):
    from labkit.labs.lab_decoder import attention_state

    with pytest.raises(ValueError, match=message):
        attention_state(**kwargs)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 6), split=st.integers(1, 5), shift=st.floats(-1e3, 1e3))
def test_causal_prefix_is_exactly_independent_of_any_future(seed, length, split, shift):
    split = min(split, length - 1)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, 4))
    allowed = causal_allowed(np.arange(length), np.arange(length))
    changed = x.copy()
    changed[:, split:] += shift
    before, weights = attention(x, x, x, allowed)
    after, _ = attention(changed, changed, changed, allowed)
    assert np.array_equal(before[:, :split], after[:, :split]), (
        f"prefix [:{split}] moved by {_far(before[:, :split], after[:, :split]):.3g} when the future shifted by {shift}"
    )
    assert np.all(weights[:, ~allowed] == 0.0), "future keys must carry exactly zero weight"
