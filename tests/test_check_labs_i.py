"""The public checks of labs 01–06, as a class copy sees them (the key set aside): typical wrong answers are
caught by a property at their place, with the reader's own value. No right answer lives here (a class copy
ships this file): the worked solutions are tried in answer_key/tests/test_labs_i.py.
"""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import reset_attempts, without_key
from labkit.check.labs_i import faulty_log_softmax_grad, smoothed_dpo_loss, weighted_cross_entropy
from labkit.labs import dpo, masks
from labkit.labs.common import finite_difference, masked_cross_entropy
from labkit.nn import DecoderFaults, KVCache, attention


@pytest.fixture(autouse=True)
def as_a_class_copy():
    reset_attempts()
    with without_key():
        yield
    reset_attempts()


def _failed(result, where_part: str):
    assert not result.passed and result.status == "failed", f"expected a failure, got {result!r}"
    assert where_part in (result.where or "") + result.message, f"{where_part!r} not in the verdict:\n{result!r}"
    return result


def _softmax_rows(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# --- 01 masked_ce_gradient (weighted) --------------------------------------------------------------


def test_the_kits_boolean_mask_gradient_misses_the_weights():
    def kit_mask(logits, targets, weights):
        return masked_cross_entropy(logits, targets, np.asarray(weights) > 0)[1]

    result = _failed(
        check.masked_ce_gradient(kit_mask), "the seeded [3, 4] batch, weights [0.5, 0, 2]”, gradient[0, 0]"
    )
    assert result.rule and result.got != 0.0


def test_a_gradient_averaged_over_all_rows_is_caught_on_the_first_weighted_batch():
    def over_rows(logits, targets, weights):
        g = _softmax_rows(np.asarray(logits, dtype=float))
        g[np.arange(len(g)), targets] -= 1.0
        return g * np.asarray(weights)[:, None] / len(weights)

    _failed(check.masked_ce_gradient(over_rows), "seeded [3, 4] batch")


def test_an_unshifted_softmax_overflows_in_the_thousands():
    def unshifted(logits, targets, weights):
        e = np.exp(logits)
        g = e / e.sum(axis=1, keepdims=True)
        g[np.arange(len(g)), targets] -= 1.0
        return g * np.asarray(weights)[:, None] / np.sum(weights)

    result = _failed(check.masked_ce_gradient(unshifted), "logits in the thousands, weights [1, 3]”, gradient[0, 0]")
    assert np.isnan(result.got)


def test_a_numerical_gradient_that_moves_a_row_of_weight_zero_is_caught_there():
    def numerical_with_noise(logits, targets, weights):
        g = finite_difference(lambda z: weighted_cross_entropy(z, targets, weights), logits)
        return g + 1e-9 * (np.asarray(weights) == 0)[:, None]

    result = _failed(check.masked_ce_gradient(numerical_with_noise), "weights [0.5, 0, 2]”, gradient[1]")
    assert result.got == [1e-9] * 4


# --- 01 fixed_log_softmax_grad ---------------------------------------------------------------------


def test_the_faulty_backward_diverges_first_on_the_labs_row():
    result = _failed(check.fixed_log_softmax_grad(faulty_log_softmax_grad), "the lab's row z = [ln 2, 0, 0]")
    assert result.where.endswith("gradient[0, 0]") and result.got == pytest.approx(0.25)


def test_a_backward_that_forgets_the_upstream_sum_is_caught():
    def without_sum(z, upstream):
        return upstream - _softmax_rows(np.asarray(z, dtype=float))

    _failed(check.fixed_log_softmax_grad(without_sum), "a row whose largest logit is 0")


# --- 02 sliding_window_mask ------------------------------------------------------------------------


def test_the_kits_document_mask_ignores_the_window():
    result = check.sliding_window_mask(lambda ids, window: masks.document_causal_allowed(ids))
    _failed(result, "the lab's two documents, window 2”, allowed[2, 0]")
    assert "band" in result.rule and result.got is True


def test_a_window_one_too_wide_is_caught_by_the_band():
    def one_too_wide(ids, window):
        i, j = np.indices((len(ids), len(ids)))
        return (ids[:, None] == ids[None, :]) & (j <= i) & (i - j <= window)

    _failed(check.sliding_window_mask(one_too_wide), "window 2”, allowed[2, 0]")


def test_a_band_that_crosses_documents_is_caught():
    def no_documents(ids, window):
        i, j = np.indices((len(ids), len(ids)))
        return (j <= i) & (i - j < window)

    result = _failed(check.sliding_window_mask(no_documents), "allowed[4, 3]")
    assert result.rule == "no key of another document"


def test_a_window_that_leaves_out_the_query_itself_is_caught_by_the_count():
    def without_itself(ids, window):
        i, j = np.indices((len(ids), len(ids)))
        return (ids[:, None] == ids[None, :]) & (j < i) & (i - j < window)

    result = _failed(check.sliding_window_mask(without_itself), "row 0")
    assert result.got == 0


def test_an_integer_mask_is_refused_with_its_dtype():
    result = check.sliding_window_mask(lambda ids, window: np.eye(len(ids), dtype=int))
    assert not result.passed and "boolean" in result.message


# --- 03 alibi_causal_attention ---------------------------------------------------------------------


def _kit_causal(q, k, v, slope):
    t = len(q)
    output, weights = attention(q[None], k[None], v[None], np.tril(np.ones((t, t), dtype=bool)))
    return output[0], weights[0]


def test_the_kits_causal_attention_passes_slope_0_and_fails_the_first_slope():
    result = _failed(check.alibi_causal_attention(_kit_causal), "slope 0.5”, weights[1, 0]")
    assert "slope" in result.rule


def test_a_bias_with_the_wrong_sign_is_caught():
    def rewarding_distance(q, k, v, slope):
        return _kit_causal(q, k, v, 0.0) if slope == 0 else _kit_causal(q, k, v, -slope)

    _failed(check.alibi_causal_attention(rewarding_distance), "slope 0.5")


def test_weights_masked_after_the_softmax_do_not_sum_to_one():
    def mask_after(q, k, v, slope):
        t = len(q)
        i, j = np.indices((t, t))
        weights = np.tril(_softmax_rows(q @ k.T / np.sqrt(q.shape[1]) - slope * (i - j)))
        return weights @ v, weights

    result = _failed(check.alibi_causal_attention(mask_after), "weights[0, 0]")
    assert result.rule == "each row of weights sums to 1"


def test_unscaled_scores_are_caught_on_the_hand_example():
    def unscaled(q, k, v, slope):
        t = len(q)
        i, j = np.indices((t, t))
        weights = _softmax_rows(np.where(j <= i, q @ k.T - slope * (i - j), -np.inf))
        return weights @ v, weights

    _failed(check.alibi_causal_attention(unscaled), "the hand example as row 1 of two tokens, slope 0”, weights[1, 0]")


def test_attention_returning_one_array_gets_a_clear_message():
    result = check.alibi_causal_attention(lambda q, k, v, slope: q)
    assert not result.passed and "return a tuple (output, weights)" in result.message


# --- 04 cached_attention_step, kv_cache_bytes ------------------------------------------------------


def _with(keys_of, output_of):
    def step(q, cache_k, cache_v, k_new, v_new):
        keys, values = keys_of(cache_k, k_new), keys_of(cache_v, v_new)
        return output_of(q, keys, values, v_new), keys, values

    return step


def _append(old, new):
    return np.concatenate([old, new], axis=2)


def test_a_step_that_attends_only_to_the_new_token_differs_from_the_full_pass_at_position_1():
    result = check.cached_attention_step(_with(_append, lambda q, keys, values, v_new: v_new))
    _failed(result, "the lab's seven tokens, logits at position 1")


def test_a_step_that_puts_the_new_key_first_breaks_the_cache_at_step_1():
    def prepend(old, new):
        return np.concatenate([new, old], axis=2)

    def kit(q, keys, values, v_new):
        return attention(q, keys, values, np.ones((1, keys.shape[2]), dtype=bool))[0]

    _failed(check.cached_attention_step(_with(prepend, kit)), "decode step 1 (token 5 at position 1), layer 0, keys")


def test_a_step_that_forgets_to_append_names_the_step_and_the_shape():
    result = check.cached_attention_step(lambda q, cache_k, cache_v, k_new, v_new: (q, cache_k, cache_v))
    assert not result.passed and "at decode step 0 (token 1 at position 0), layer 0" in result.message
    assert "keys must have shape [1, 2, 1, 4], got [1, 2, 0, 4]" in result.message


def test_a_step_without_its_query_axis_names_the_step():
    result = check.cached_attention_step(_with(_append, lambda q, keys, values, v_new: values.mean(axis=2)))
    assert not result.passed and "output must have shape [1, 2, 1, 4], got [1, 2, 4]" in result.message


def test_counting_query_heads_is_caught_on_the_grouped_decoder():
    def query_heads(config, batch, positions):
        return 2 * config.n_layers * batch * config.n_q_heads * positions * config.head_dim * 8

    result = _failed(check.kv_cache_bytes(query_heads), "toy-decoder-v1")
    assert result.got == 2 * 2 * 2 * 2 * 5 * 4 * 8  # 2 layers, 2 sequences, 2 query heads, 5 positions, d_h 4


def test_the_old_answer_1792_is_right_for_the_lab_decoder_only():
    result = _failed(check.kv_cache_bytes(lambda config, batch, positions: 1792), "toy-decoder-v1")
    assert result.got == 1792


def test_a_size_as_a_string_is_refused():
    _failed(check.kv_cache_bytes(lambda config, batch, positions: "1792"), "the lab decoder, 1 sequence of 7 tokens")


# --- 05 distinct_layer_keys, cached_path_agrees ----------------------------------------------------


def test_layer_identity_instead_of_values_misses_the_copied_cache():
    result = _failed(check.distinct_layer_keys(lambda cache: cache.keys[0] is not cache.keys[1]), "copy_layer1_cache")
    assert result.got is True


def test_exact_inequality_misses_rounding_noise():
    result = check.distinct_layer_keys(lambda cache: not np.array_equal(cache.keys[0], cache.keys[1]))
    _failed(result, "rounding noise")


def test_one_shot_prefill_cannot_see_the_faults():
    def prefill_once(model, tokens):
        result, _ = model.prefill(np.asarray(tokens)[None, :])
        return bool(np.allclose(result.logits[0], model.full_logits(np.asarray(tokens)[None, :])[0], atol=1e-12))

    result = _failed(check.cached_path_agrees(prefill_once), "reset_rope_position")
    assert result.got is True


def test_bitwise_comparison_fails_the_correct_decoder():
    def bitwise(model, tokens):
        cache = KVCache(model.config.n_layers)
        stepped = np.stack([model.decode_step(np.array([t]), cache).next_logits[0] for t in tokens])
        return bool(np.array_equal(stepped, model.full_logits(np.asarray(tokens)[None, :])[0]))

    _failed(check.cached_path_agrees(bitwise), "decoder correct")


def test_reading_the_fault_switches_instead_of_the_logits_is_caught_at_one_token():
    result = _failed(check.cached_path_agrees(lambda model, tokens: model.faults == DecoderFaults()), "one token")
    assert result.got is False


def test_a_check_that_answers_a_number_is_told_to_answer_true_or_false():
    result = check.cached_path_agrees(lambda model, tokens: 1)
    assert not result.passed and "True or False" in result.message


# --- 06 dpo_loss_when_beta_doubles, smoothed_dpo_gradient ------------------------------------------


@pytest.mark.parametrize("word", ["rises", "rise", "up", "Increase", " goes up "])
def test_every_form_of_the_wrong_direction_fails(word):
    result = check.dpo_loss_when_beta_doubles(word)
    assert not result.passed and result.status == "failed" and result.got == word


@pytest.mark.parametrize("answer", ["sideways", 1, True])
def test_an_answer_that_is_no_direction_is_told_what_to_answer(answer):
    result = check.dpo_loss_when_beta_doubles(answer)
    assert not result.passed and ("rises" in result.message or "a word" in result.message), repr(result)


def test_the_kits_plain_dpo_gradient_passes_epsilon_0_and_fails_at_0_1():
    def plain(policy, reference, beta, smoothing):
        return dpo.dpo_gradient(policy, reference, beta)

    _failed(check.smoothed_dpo_gradient(plain), "the lab's pair, β = 0.2, ε = 0.1”, gradient[0]")


def test_a_smoothing_term_with_the_wrong_sign_is_caught():
    def wrong_sign(policy, reference, beta, smoothing):
        plain = dpo.dpo_gradient(policy, reference, beta)
        return plain * (1 + smoothing)

    _failed(check.smoothed_dpo_gradient(wrong_sign), "ε = 0.1")


def test_the_public_loss_is_the_kits_dpo_loss_at_epsilon_0():
    pair, ref = dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS
    assert smoothed_dpo_loss(pair, ref, 0.2, 0.0) == pytest.approx(dpo.dpo_loss(pair, ref, 0.2), abs=1e-15)
