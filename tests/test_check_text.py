"""Trace one's exercises catch typical wrong answers, each at the event and with the hint
a reader needs.  (Every solution passing, and stubs/crashes/wrong signatures, are covered
for all exercises by tests/test_check.py.)"""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.text import DecoderParts
from labkit.nn import attention, rms_norm, rope
from labkit.text.model import load_decoder

# -- minimum_length_eos_mask ---------------------------------------------------------------------


def _eos_mask(condition, eos=lambda context: context.config.eos_id, value=-np.inf):
    def mask(logits, context):
        out = logits.copy()
        if condition(len(context.selected_so_far), context.config.minimum_output_tokens):
            out[eos(context)] = value
        return out

    return mask


def test_eos_mask_that_never_masks_is_caught_at_the_first_selection():
    result = check.minimum_length_eos_mask(lambda logits, context: logits.copy())
    assert not result.passed
    assert result.where.startswith("e05 token.selected (step 1), field masked_ids"), result.where
    assert result.rule == "discrete_state"
    assert 18 in result.expected and 18 not in result.got, (result.got, result.expected)
    assert result.hint


def test_eos_mask_that_counts_the_pending_token_is_caught_at_the_first_selection():
    result = check.minimum_length_eos_mask(_eos_mask(lambda n, minimum: n + 1 < minimum))
    assert not result.passed and result.where.startswith("e05 "), result.where
    assert result.hint


def test_eos_mask_with_less_or_equal_is_caught_one_step_late():
    result = check.minimum_length_eos_mask(_eos_mask(lambda n, minimum: n <= minimum))
    assert not result.passed
    assert result.where.startswith("e09 token.selected (step 2), field masked_ids"), result.where
    assert result.hint


def test_eos_mask_with_a_large_negative_number_is_caught():
    result = check.minimum_length_eos_mask(_eos_mask(lambda n, minimum: n < minimum, value=-1e9))
    assert not result.passed and result.where.startswith("e05 "), result.where
    assert result.hint


def test_eos_mask_with_a_hard_coded_minimum_fails_the_longer_request():
    result = check.minimum_length_eos_mask(_eos_mask(lambda n, minimum: n < 1))
    assert not result.passed
    assert "minimum_output_tokens = 6" in result.where and result.where.startswith("e09 "), result.where
    assert result.hint


def test_eos_mask_with_a_hard_coded_eos_id_fails_the_direct_cases():
    result = check.minimum_length_eos_mask(_eos_mask(lambda n, minimum: n < minimum, eos=lambda context: 18))
    assert not result.passed
    assert result.where == "case “EOS is ID 7, minimum 2, one token selected”, result[7]", result.where
    assert result.expected == -np.inf and result.hint


def test_eos_mask_that_writes_into_its_input_is_refused():
    def in_place(logits, context):
        if len(context.selected_so_far) < context.config.minimum_output_tokens:
            logits[context.config.eos_id] = -np.inf
        return logits

    result = check.minimum_length_eos_mask(in_place)
    assert not result.passed and "changed the logits it was given" in result.message


def test_eos_mask_that_changes_the_dtype_is_caught_as_a_tensor_divergence():
    result = check.minimum_length_eos_mask(
        lambda logits, context: _eos_mask(lambda n, m: n < m)(logits, context).astype(np.float64)
    )
    assert not result.passed and result.rule == "tensors"
    assert "processed_logits.dtype" in result.where and (result.got, result.expected) == ("float64", "float32")
    assert result.hint


# -- decode_one ------------------------------------------------------------------------------------


def _decode(position_shift=0, appends=1, position_of=None):
    """A from-parts decode step; ``position_shift``, ``appends`` and ``position_of(cache, token_id)``
    inject the usual mistakes."""

    def decode_one(decoder, cache, token_id):
        cfg, w = decoder.config, decoder.weights
        at = position_of(cache, token_id) if position_of else cache.length + position_shift
        position = np.array([at])

        def heads(x, n):
            return x.reshape(1, 1, n, cfg.head_dim).transpose(0, 2, 1, 3)

        x = w.embedding[[[token_id]]]
        for i, layer in enumerate(w.layers):
            h = rms_norm(x, cfg.norm_eps)
            q = rope(heads(h @ layer["q"], cfg.n_q_heads), position, cfg.rope_base)
            k = rope(heads(h @ layer["k"], cfg.n_kv_heads), position, cfg.rope_base)
            v = heads(h @ layer["v"], cfg.n_kv_heads)
            keys = np.concatenate([cache.keys[i], k], axis=-2)
            values = np.concatenate([cache.values[i], v], axis=-2)
            for _ in range(appends):
                cache.append(i, k, v)
            out, _ = attention(
                q,
                np.repeat(keys, cfg.group_size, 1),
                np.repeat(values, cfg.group_size, 1),
                np.ones((1, keys.shape[-2]), dtype=bool),
            )
            x = x + out.transpose(0, 2, 1, 3).reshape(1, 1, -1) @ layer["o"]
            h = rms_norm(x, cfg.norm_eps)
            gate = h @ layer["gate"]
            x = x + (gate / (1 + np.exp(-gate)) * (h @ layer["up"])) @ layer["down"]
        return (rms_norm(x, cfg.norm_eps) @ w.output)[0, 0]

    return decode_one


def test_the_mistake_free_variant_of_the_test_helper_passes():
    """Guards the wrong-answer tests below: with no mistake injected, the helper is right."""
    result = check.decode_one(_decode())
    assert result.passed, repr(result)


@pytest.mark.parametrize("shift", [1, -1])
def test_decode_one_position_off_is_caught_at_the_first_decode(shift):
    result = check.decode_one(_decode(position_shift=shift))
    assert not result.passed
    assert result.where.startswith("e08 decode.completed (step 1), field tensors.raw_logits"), result.where
    assert result.rule == "tensors"
    assert result.hint


def test_decode_at_position_zero_is_diagnosed_as_the_reset_position_mistake():
    result = check.decode_one(_decode(position_shift=-12))  # the first decode feeds at 12 + (−12) = 0
    assert not result.passed and result.where.startswith("e08 decode.completed (step 1)"), result.where
    assert result.hint


def test_decode_that_assumes_the_chapters_12_token_prompt_fails_the_shorter_request():
    fed = []

    def twelve_plus_tokens_fed(cache, token_id):
        if token_id == 14:  # the first answer token: a new request has started
            fed.clear()
        fed.append(token_id)
        return 12 + len(fed) - 1

    result = check.decode_one(_decode(position_of=twelve_plus_tokens_fed))
    assert not result.passed
    assert result.where.startswith("e08 decode.completed (step 1)") and "11 input IDs" in result.where, result.where
    assert result.hint


@pytest.mark.parametrize(("appends", "length"), [(0, 12), (2, 14)])
def test_decode_that_does_not_grow_the_cache_by_one_is_caught(appends, length):
    result = check.decode_one(_decode(appends=appends))
    assert not result.passed
    assert result.where.startswith("e08 decode.completed (step 1), field new_cache_length"), result.where
    assert (result.got, result.expected) == (length, 13)
    assert result.hint


def test_decode_that_calls_the_decoders_own_step_is_refused():
    result = check.decode_one(lambda decoder, cache, token_id: decoder.decode_step([token_id], cache).next_logits[0])
    assert not result.passed and "decoder.decode_step is the step you are writing" in result.message


def test_decode_that_appends_to_one_layer_only_is_named():
    def one_layer(decoder, cache, token_id):
        cache.append(0, cache.keys[0][..., -1:, :], cache.values[0][..., -1:, :])
        return np.zeros(decoder.config.vocab_size, dtype=np.float32)

    result = check.decode_one(one_layer)
    assert not result.passed and "different lengths [13, 12]" in result.message


def test_decode_returning_a_batch_of_rows_is_refused_with_the_shape():
    result = check.decode_one(lambda decoder, cache, token_id: np.zeros((1, 2, 20)))
    assert not result.passed and "shape [20] (or [1, 20]), got [1, 2, 20]" in result.message


def test_decoder_parts_hide_the_forward_pass_and_freeze_the_weights():
    parts = DecoderParts(load_decoder())
    assert parts.config.model_id == "toy-decoder-v1"
    with pytest.raises(AttributeError, match="only .config, .weights"):
        parts.cache  # noqa: B018
    with pytest.raises(ValueError, match="read-only"):
        parts.weights.layers[0]["q"][0, 0] = 1.0
