"""KV-cache lab: cached decoding equals full recompute; the three cache faults and who catches them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import cache_equivalence
from labkit.labs.cache_equivalence import cached_logits, full_logits, prefix_recompute_logits
from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens

# source mode → (max abs logit error, logit check passed, distinct-layer check passed)
SOURCE_FAULTS = {
    "reset_rope_position": (0.2477276305125953, False, True),
    "copy_layer1_cache_to_layer2": (0.9449206662154166, False, False),
    "top_left_rectangular_mask": (1.5511643198831297, False, True),
}
# The source's configuration object: (key, the LAB_CONFIG field behind it or None, the source's value)
SOURCE_CONFIGURATION = [
    ("layers", "n_layers", 2),
    ("heads", "n_q_heads", 2),
    ("head_dim", "head_dim", 4),
    ("width", "width", 8),
    ("ffn_width", "ffn_width", 12),
    ("vocab", "vocab_size", 17),
    ("tokens", None, 7),
    ("dtype", "dtype", "float64"),
    ("position", None, "pairwise RoPE"),
    ("ffn", None, "SwiGLU"),
]

# each lab runs once for the whole module
equivalence = pytest.fixture(scope="module")(cache_equivalence.run)
faults = pytest.fixture(scope="module")(cache_equivalence.run_faults)


def test_lab_decoder_is_the_books_transformer_configured_as_the_lab():
    model = lab_decoder()
    assert model.config == LAB_CONFIG and LAB_CONFIG.n_kv_heads == 2
    for _, field, value in SOURCE_CONFIGURATION:
        assert field is None or getattr(LAB_CONFIG, field) == value, f"LAB_CONFIG.{field} is not the source's {value!r}"
    assert model.weights.embedding.dtype == np.float64


def test_cached_logits_equal_full_recompute(equivalence):
    for key in ("full_vs_cached_max_abs_logit_error", "prefix_vs_cached_max_abs_logit_error"):
        assert equivalence[key] < 1e-12, f"{key} = {equivalence[key]:.3g}, tolerance 1e-12"
    model, tokens = lab_decoder(), lab_tokens()
    full = full_logits(model, tokens)
    cached, _ = cached_logits(model, tokens)
    prefix = prefix_recompute_logits(model, tokens)
    assert full.shape == cached.shape == prefix.shape == (7, 17)
    assert np.allclose(full, cached, atol=1e-12, rtol=1e-12), (
        f"full vs cached off by {np.max(np.abs(full - cached)):.3g}"
    )
    assert np.allclose(prefix, cached, atol=1e-12, rtol=1e-12), (
        f"prefix vs cached off by {np.max(np.abs(prefix - cached)):.3g}"
    )


def test_cache_shapes_and_future_independence_match_source(equivalence):
    assert equivalence["per_layer_cache_shapes"] == [[2, 7, 4], [2, 7, 4]]
    assert equivalence["future_perturbation_prefix_max_error"] == 0.0
    assert equivalence["configuration"] == {key: value for key, _, value in SOURCE_CONFIGURATION}
    assert (equivalence["abs_tolerance"], equivalence["relative_tolerance"]) == (1e-12, 1e-12)


def test_the_two_layers_cache_different_keys():
    _, cache = cached_logits(lab_decoder(), lab_tokens())
    gap = float(np.max(np.abs(cache.keys[0] - cache.keys[1])))
    assert gap > 0.1, f"layer 0 and layer 1 keys differ by only {gap:.3g}"


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(0, 16), min_size=1, max_size=6))
def test_cached_logits_equal_full_recompute_for_any_tokens(tokens):
    model = lab_decoder()
    tokens = np.array(tokens)
    full = full_logits(model, tokens)
    cached, cache = cached_logits(model, tokens)
    gap = float(np.max(np.abs(full - cached)))
    assert gap < 1e-12, f"full vs cached logits differ by {gap:.3g} for tokens {tokens.tolist()}"
    assert cache.length == tokens.size


def test_fault_errors_match_source(faults):
    assert faults["tokens"] == [1, 5, 3, 8, 2, 9, 4]
    assert (faults["atol"], faults["rtol"]) == (1e-12, 1e-12)
    modes = [case["mode"] for case in faults["cases"]]
    assert modes == ["correct", "reset_rope_position", "copy_layer1_cache_to_layer2", "top_left_rectangular_mask"]
    for case in faults["cases"]:
        assert case["shape_check_passed"], f"{case['mode']}: shapes must stay right"
        assert case["per_layer_cache_shapes"] == [[2, 7, 4], [2, 7, 4]]
        if case["mode"] == "correct":
            assert case["logit_allclose_passed"] and case["distinct_layer_keys_passed"]
            assert case["max_absolute_logit_error"] < 1e-12
            continue
        error, logit_ok, distinct_ok = SOURCE_FAULTS[case["mode"]]
        got = case["max_absolute_logit_error"]
        assert got == pytest.approx(error, rel=1e-12), (
            f"{case['mode']}: max abs logit error {got!r} vs source {error!r}, off by {abs(got - error):.3g}"
        )
        assert case["logit_allclose_passed"] is logit_ok
        assert case["distinct_layer_keys_passed"] is distinct_ok, f"{case['mode']}: distinct-layer check"


def test_which_check_catches_each_fault():
    caught = {mode: cache_equivalence.run_case(mode).caught_by for mode in cache_equivalence.MODES}
    assert caught == {
        "correct": [],
        "reset_rope_position": ["logit"],
        "copy_layer1_cache_to_layer2": ["logit", "distinct_layer"],
        "top_left_rectangular_mask": ["logit"],
    }


def test_faults_touch_only_the_cached_path():
    broken = lab_decoder("reset_rope_position")
    assert np.array_equal(full_logits(broken, lab_tokens()), full_logits(lab_decoder(), lab_tokens())), (
        "a decode-step fault must leave the full forward pass (the reference) untouched"
    )


def test_bad_fault_names_are_clear_errors():
    with pytest.raises(ValueError, match="mode must be one of"):
        cache_equivalence.run_case("copy_layer0_cache_to_layer1")  # labkit's name, not the source's
    with pytest.raises(ValueError, match="unknown decoder fault"):
        lab_decoder("swap_heads")
    with pytest.raises(ValueError, match="unknown decoder fault 3"):
        lab_decoder(3)
