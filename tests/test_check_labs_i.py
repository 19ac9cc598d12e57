"""Exercises of labs 01–05: typical wrong answers are caught at the expected place with the expected hint.

tests/test_check.py already runs every solution (must pass) and the stub/crash/signature
cases; here each exercise meets one or two deliberately wrong answers.
"""

import numpy as np

import labkit.check as check
from labkit.check.labs import _reference_step, decode_with_attention_step
from labkit.labs.cache_equivalence import cached_logits, full_logits
from labkit.labs.lab_decoder import lab_decoder, lab_tokens
from labkit.nn import KVCache


def _softmax_rows(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _failed(result, where_part: str) -> None:
    assert not result.passed, f"expected a failure, got {result!r}"
    assert where_part in (result.where or result.message), f"where/message lacks {where_part!r}:\n{result!r}"
    assert result.hint, f"no rule-level hint:\n{result!r}"


# --- the checker's decoder driver is the real decoder ---------------------------------------


def test_driver_with_reference_step_equals_labkit_decode_steps_and_full_pass():
    model, tokens = lab_decoder(), lab_tokens()
    driven = decode_with_attention_step(lambda t, layer, *arrays: _reference_step(*arrays), model, tokens)
    stepped, _ = cached_logits(model, tokens)
    full = full_logits(model, tokens)
    for name, other in (("Decoder.decode_step", stepped), ("Decoder.full_logits", full)):
        gap = float(np.max(np.abs(driven - other)))
        assert gap <= 1e-12, f"checker driver vs {name}: logits differ by {gap:.3g} (allowed 1e-12)"


# --- 01 masked_ce_gradient -------------------------------------------------------------------


def _softmax_minus_onehot(logits, targets):
    g = _softmax_rows(np.asarray(logits, dtype=float))
    g[np.arange(len(g)), targets] -= 1.0
    return g


def test_ce_gradient_divided_by_all_rows_is_caught():
    def over_all_rows(logits, targets, valid):
        return _softmax_minus_onehot(logits, targets) * valid[:, None] / len(valid)

    _failed(check.masked_ce_gradient(over_all_rows), "seeded [3, 4] batch")


def test_ce_gradient_that_ignores_the_mask_is_caught_on_the_masked_row():
    def unmasked(logits, targets, valid):
        return _softmax_minus_onehot(logits, targets) / valid.sum()

    result = check.masked_ce_gradient(unmasked)
    _failed(result, "row 1 left out of the loss”, gradient[1, 0]")
    assert result.expected == 0.0 and result.got != 0.0


def test_ce_gradient_without_the_max_shift_overflows_and_is_told_so():
    def unshifted(logits, targets, valid):
        e = np.exp(logits)
        g = e / e.sum(axis=1, keepdims=True)
        g[np.arange(len(g)), targets] -= 1.0
        return g * valid[:, None] / valid.sum()

    _failed(check.masked_ce_gradient(unshifted), "logits in the thousands")


# --- 02 document_causal_mask, packed_prediction_mask ------------------------------------------


# --- 03 causal_self_attention ------------------------------------------------------------


def test_attention_masked_after_the_softmax_leaves_rows_short_of_one():
    def mask_after(q, k, v):
        weights = np.tril(_softmax_rows(q @ k.T / np.sqrt(q.shape[-1])))
        return weights @ v, weights

    result = check.causal_self_attention(mask_after)
    _failed(result, "weights[0, 0]")
    assert result.expected == 1.0 and result.got < 1.0  # row 0 sees only itself; its weight falls short


def test_attention_without_the_scale_is_caught_on_the_hand_example():
    def unscaled(q, k, v):
        scores = np.where(np.tril(np.ones((len(q), len(q)), dtype=bool)), q @ k.T, -np.inf)
        weights = _softmax_rows(scores)
        return weights @ v, weights

    result = check.causal_self_attention(unscaled)
    _failed(result, "the hand example as row 1 of two tokens”, weights[1, 0]")
    assert abs(result.expected - 0.6698) < 1e-4


def test_attention_without_a_mask_is_caught_as_a_future_leak():
    def bidirectional(q, k, v):
        weights = _softmax_rows(q @ k.T / np.sqrt(q.shape[-1]))
        return weights @ v, weights

    _failed(check.causal_self_attention(bidirectional), "two tokens”, weights[0, 0]")


def test_attention_returning_one_array_gets_a_clear_message():
    result = check.causal_self_attention(lambda q, k, v: q)
    assert not result.passed and "return a tuple (output, weights)" in result.message


def test_attention_pass_message_reproduces_the_hand_example(answer_key):
    module = answer_key("labs_i")
    result = check.causal_self_attention(module.causal_self_attention)
    assert result.passed, repr(result)
    q, k, v = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 4.0]])
    output, weights = module.causal_self_attention(q, k, v)
    assert np.round(weights[1], 4).tolist() == [0.6698, 0.3302] and np.round(output[1], 4).tolist() == [1.3395, 1.321]


# --- 04 cached_attention_step ---------------------------------------------------------------


def test_decode_step_that_attends_only_to_the_new_token_is_caught_at_step_1():
    def new_only(q, cache_k, cache_v, k_new, v_new):
        return (v_new, np.concatenate([cache_k, k_new], axis=2), np.concatenate([cache_v, v_new], axis=2))

    _failed(check.cached_attention_step(new_only), "decode step 1 (token 5 at position 1), layer 0")


def test_decode_step_that_forgets_to_append_is_caught_by_shape():
    def no_append(q, cache_k, cache_v, k_new, v_new):
        keys, values = (np.concatenate([cache_k, k_new], axis=2), np.concatenate([cache_v, v_new], axis=2))
        weights = _softmax_rows(q @ np.swapaxes(keys, -1, -2) / 2.0)
        return weights @ values, cache_k, cache_v

    result = check.cached_attention_step(no_append)
    _failed(result, "decode step 0")
    assert result.got == [1, 2, 0, 4] and result.expected == [1, 2, 1, 4]


def test_decode_step_that_puts_the_new_key_first_is_caught():
    def prepend(q, cache_k, cache_v, k_new, v_new):
        keys, values = (np.concatenate([k_new, cache_k], axis=2), np.concatenate([v_new, cache_v], axis=2))
        weights = _softmax_rows(q @ np.swapaxes(keys, -1, -2) / 2.0)
        return weights @ values, keys, values

    _failed(
        check.cached_attention_step(prepend),
        "decode step 1 (token 5 at position 1), layer 0”, keys[0, 0, 0, 0]",
    )


# --- 05 distinct_layer_keys, cached_path_agrees ------------------------------------------------


def test_layer_identity_instead_of_values_misses_the_copied_cache():
    result = check.distinct_layer_keys(lambda cache: cache.keys[0] is not cache.keys[1])
    _failed(result, "copy_layer1_cache_to_layer2")


def test_exact_inequality_misses_rounding_noise():
    result = check.distinct_layer_keys(lambda cache: not np.array_equal(cache.keys[0], cache.keys[1]))
    _failed(result, "rounding noise")


def test_one_shot_prefill_cannot_see_the_faults():
    def prefill_once(model, tokens):
        result, _ = model.prefill(np.asarray(tokens)[None, :])
        return bool(np.allclose(result.logits[0], model.full_logits(np.asarray(tokens)[None, :])[0], atol=1e-12))

    result = check.cached_path_agrees(prefill_once)
    _failed(result, "reset_rope_position")
    assert result.got is True and result.expected is False


def test_bitwise_comparison_fails_the_correct_cache():
    def bitwise(model, tokens):
        cache = KVCache(model.config.n_layers)
        stepped = np.stack([model.decode_step(np.array([t]), cache).next_logits[0] for t in tokens])
        return bool(np.array_equal(stepped, model.full_logits(np.asarray(tokens)[None, :])[0]))

    _failed(check.cached_path_agrees(bitwise), "decoder correct")


def test_decode_step_that_skips_its_own_key_is_caught_at_step_1():
    def cache_only(q, cache_k, cache_v, k_new, v_new):
        keys, values = (np.concatenate([cache_k, k_new], axis=2), np.concatenate([cache_v, v_new], axis=2))
        if cache_k.shape[2] == 0:  # nothing cached yet: fall back to the new position
            return v_new, keys, values
        weights = _softmax_rows(q @ np.swapaxes(cache_k, -1, -2) / 2.0)
        return weights @ cache_v, keys, values

    _failed(check.cached_attention_step(cache_only), "decode step 1")


def test_decode_step_output_without_its_query_axis_names_the_step():
    def squeezed(q, cache_k, cache_v, k_new, v_new):
        keys, values = (np.concatenate([cache_k, k_new], axis=2), np.concatenate([cache_v, v_new], axis=2))
        return values.mean(axis=2), keys, values

    result = check.cached_attention_step(squeezed)
    assert not result.passed
    assert (
        "at decode step 0 (token 1 at position 0), layer 0: output must have shape [1, 2, 1, 4], got [1, 2, 4]"
        in result.message
    ), result.message
