"""Labs 01–06 with the key: every worked solution passes (and passes the public properties alone, as a class
copy checks it); right answers in every reasonable form pass and near misses fail; the hidden cases catch an
answer that only fits the public ones (a numerical gradient, a measured cache, a check that reads the
configuration); each exercise's full check of a right answer stays within the class grader's budget."""

import time

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import reset_attempts, without_key
from labkit.check.labs_i import smoothed_dpo_loss, weighted_cross_entropy
from labkit.check.labs_i_cache import decode_with_attention_step
from labkit.labs.cache_equivalence import cached_logits, full_logits
from labkit.labs.common import finite_difference, log_softmax
from labkit.labs.lab_decoder import lab_decoder, lab_tokens
from labkit.nn import KVCache

EXERCISES = check.exercises()
MINE = [
    "uniform_row_loss",
    "uniform_row_gradient",
    "masked_ce_gradient",
    "fixed_log_softmax_grad",
    "sliding_window_mask",
    "packed_zero_predictions",
    "alibi_causal_attention",
    "scaled_query_weight",
    "cached_attention_step",
    "cache_length_after_step_3",
    "kv_cache_bytes",
    "distinct_layer_keys",
    "cached_path_agrees",
    "dpo_loss_when_beta_doubles",
    "smoothed_dpo_gradient",
]
GRADED = [name for name in MINE if EXERCISES[name].graded]


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()
    yield
    reset_attempts()


@pytest.fixture(scope="module")
def solved():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "solutions" / "labs_i.py"
    spec = importlib.util.spec_from_file_location("solutions_labs_i_key_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_solutions_file_holds_exactly_these_exercises(solved):
    names = {n for n, v in vars(solved).items() if not n.startswith("_") and n not in ("math", "np")}
    assert names == set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_the_solution_passes_with_the_key_within_the_budget(name, solved):
    exercise = EXERCISES[name]
    assert exercise.keyed, f"{name}: nothing knows its answer"
    exercise(getattr(solved, name))  # warm the decoders' caches, as a grader's first student does
    start = time.perf_counter()
    result = exercise(getattr(solved, name))
    elapsed = time.perf_counter() - start
    assert result.passed, repr(result)
    assert elapsed <= 1.0, f"{name}: the full check took {elapsed:.2f} s (budget 1 s)"


@pytest.mark.parametrize("name", GRADED)
def test_the_solution_passes_the_public_properties_alone(name, solved):
    with without_key():
        assert not EXERCISES[name].keyed, f"{name}: the kit knows the answer"
        result = EXERCISES[name](getattr(solved, name))
    assert result.passed and result.status == "passed", repr(result)


def test_every_graded_exercise_is_a_function_with_public_properties():
    for name in GRADED:
        assert not EXERCISES[name].is_value and EXERCISES[name].properties is not None, name


# --- the defects: every reasonable form of a right answer passes; a near miss fails ----------------


@pytest.mark.parametrize(
    "answer",
    [
        np.array([-2 / 3, 1 / 3, 1 / 3]),
        [-2 / 3, 1 / 3, 1 / 3],
        (-0.667, 0.333, 0.333),
        [np.float64(-2 / 3), np.float32(1 / 3), 1 / 3],
        np.array([-0.6667, 0.3333, 0.3333], dtype=np.float32),
    ],
)
def test_uniform_row_gradient_takes_a_numpy_array_a_list_or_a_tuple(answer):
    result = check.uniform_row_gradient(answer)
    assert result.passed, repr(result)


def test_uniform_row_gradient_just_outside_its_tolerance_fails():
    assert not check.uniform_row_gradient(np.array([-2 / 3 + 0.006, 1 / 3, 1 / 3])).passed
    assert not check.uniform_row_gradient(np.array([-2 / 3, 1 / 3])).passed  # two numbers, not three


@pytest.mark.parametrize(
    "word",
    ["falls", "fall", "Falls", "FALL", "falling", "fell", "down", "goes down", "decrease", "decreases", "lower."],
)
def test_every_form_of_falls_passes(word):
    result = check.dpo_loss_when_beta_doubles(word)
    assert result.passed, repr(result)


@pytest.mark.parametrize(
    ("name", "right", "off"),
    [
        ("uniform_row_loss", np.log(3), 0.006),
        ("scaled_query_weight", 1 / (1 + np.exp(-10 / np.sqrt(2))), 0.011),
    ],
)
def test_predictions_pass_as_numpy_scalars_and_fail_just_outside_the_tolerance(name, right, off):
    assert EXERCISES[name](np.float64(right)).passed and EXERCISES[name](np.array(right)).passed
    assert not EXERCISES[name](right + off).passed and not EXERCISES[name](right - off).passed


def test_integer_predictions_take_numpy_integers_and_refuse_strings():
    assert check.packed_zero_predictions(np.int64(2)).passed and check.cache_length_after_step_3(7.0).passed
    assert not check.packed_zero_predictions("2").passed and not check.cache_length_after_step_3(8).passed


# --- near misses of the functions: just outside what the hidden cases allow ------------------------


def test_a_gradient_off_by_1e_9_passes_the_properties_and_fails_the_hidden_cases(solved):
    def nearly(*args):
        return solved.smoothed_dpo_gradient(*args) + 1e-9

    with without_key():
        assert check.smoothed_dpo_gradient(nearly).passed
    result = check.smoothed_dpo_gradient(nearly)
    assert not result.passed and "far apart" in result.where


# --- the hidden cases catch what only fits the public cases ----------------------------------------


def _numerical(loss):
    def gradient(point, *rest):
        return finite_difference(lambda z: loss(z, *rest), np.asarray(point, dtype=np.float64))

    return gradient


@pytest.mark.parametrize(
    ("name", "loss"),
    [
        ("masked_ce_gradient", weighted_cross_entropy),
        ("fixed_log_softmax_grad", lambda z, u: float(np.sum(u * log_softmax(z)))),
        ("smoothed_dpo_gradient", smoothed_dpo_loss),
    ],
)
def test_a_numerical_gradient_passes_the_properties_and_fails_the_key(name, loss):
    candidate = _numerical(loss)
    with without_key():
        assert EXERCISES[name](candidate).passed
    result = EXERCISES[name](candidate)
    assert not result.passed and result.where.startswith("case “"), repr(result)


def test_a_measured_cache_size_fails_on_a_layout_no_array_can_hold():
    from labkit.check.labs_i_cache import _measured_bytes

    with without_key():
        assert check.kv_cache_bytes(_measured_bytes).passed
    result = check.kv_cache_bytes(_measured_bytes)
    assert not result.passed and "array is too big" in result.message


def test_a_size_that_ignores_the_batch_fails_a_hidden_case(solved):
    def one_sequence(config, batch, positions):
        return solved.kv_cache_bytes(config, 1, positions) * (batch if positions < 11 else 1)

    with without_key():
        assert check.kv_cache_bytes(one_sequence).passed
    assert not check.kv_cache_bytes(one_sequence).passed


def test_a_window_hardwired_to_the_public_rows_fails_a_hidden_case(solved):
    def public_rows_only(ids, window):
        return solved.sliding_window_mask(ids, min(window, 3))

    with without_key():
        assert check.sliding_window_mask(public_rows_only).passed
    result = check.sliding_window_mask(public_rows_only)
    assert not result.passed and "window 4" in result.where


def test_attention_whose_slope_is_clipped_at_1_fails_a_hidden_case(solved):
    def clipped(q, k, v, slope):
        return solved.alibi_causal_attention(q, k, v, min(slope, 1.0))

    with without_key():
        assert check.alibi_causal_attention(clipped).passed
    result = check.alibi_causal_attention(clipped)
    assert not result.passed and "slope 1.3" in result.where


def test_a_decode_step_for_one_sequence_and_multi_head_only_fails_a_hidden_case(solved):
    def first_sequence(q, cache_k, cache_v, k_new, v_new):
        output, keys, values = solved.cached_attention_step(q[:1], cache_k[:1], cache_v[:1], k_new[:1], v_new[:1])
        return (
            np.repeat(output, q.shape[0], axis=0),
            np.concatenate([cache_k, k_new], 2),
            np.concatenate([cache_v, v_new], 2),
        )

    with without_key():
        assert check.cached_attention_step(first_sequence).passed
    result = check.cached_attention_step(first_sequence)
    assert not result.passed and "two sequences" in result.where


def test_a_check_that_assumes_the_lab_decoders_two_layers_fails_a_hidden_case():
    def two_layers(model, tokens):
        cache = KVCache(2)
        stepped = np.stack([model.decode_step(np.array([t]), cache).next_logits[0] for t in tokens])
        return bool(np.allclose(stepped, full_logits(model, np.asarray(tokens)), atol=1e-12, rtol=1e-12))

    with without_key():
        assert check.cached_path_agrees(two_layers).passed
    result = check.cached_path_agrees(two_layers)
    assert not result.passed and "cache has 2 layers, the model has 3" in result.message


def test_a_check_of_keys_at_allclose_with_a_loose_tolerance_fails_the_real_difference():
    def loose(cache):
        return not np.allclose(cache.keys[0], cache.keys[1], atol=1e-2)

    with without_key():
        assert check.distinct_layer_keys(loose).passed
    result = check.distinct_layer_keys(loose)
    assert not result.passed and "1e-3" in result.where


# --- the public driver is the real decoder -------------------------------------------------------


def test_the_public_driver_with_the_solution_equals_the_decoder_and_the_full_pass(solved):
    model, tokens = lab_decoder(), lab_tokens()
    driven = decode_with_attention_step(lambda t, layer, *arrays: solved.cached_attention_step(*arrays), model, tokens)
    stepped, _ = cached_logits(model, tokens)
    for name, other in (("Decoder.decode_step", stepped), ("Decoder.full_logits", full_logits(model, tokens))):
        gap = float(np.max(np.abs(driven - other)))
        assert gap <= 1e-12, f"checker driver vs {name}: logits differ by {gap:.3g} (allowed 1e-12)"
