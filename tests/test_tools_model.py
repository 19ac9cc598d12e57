"""toy-tool-decoder-v1: the §7.11 and §7.14 shapes, the 27-token proposal, prefix reuse."""

import json

import numpy as np
import pytest

from booktools.recipes.tools import TARGET_SUMMARY, fit_output_head
from labkit.tools.calls import first_model_call, second_model_call
from labkit.tools.config import USER_TEXT
from labkit.tools.fixture import TARGET_ARGUMENTS
from labkit.tools.model import CONFIG, load_decoder
from labkit.tools.toolspec import load_toolspec


@pytest.fixture(scope="module")
def calls():
    decoder, spec = load_decoder(), load_toolspec()
    first = first_model_call(decoder, spec, USER_TEXT)
    message = {"tool_call_id": "p_01", "status": "ok", "event_id": "evt_6K2", "start": "2026-07-20T09:00:00+08:00"}
    second = second_model_call(decoder, spec, USER_TEXT, first, message)
    return decoder, first, second


def test_config_is_the_source_configuration():
    assert (
        CONFIG.n_layers,
        CONFIG.width,
        CONFIG.n_q_heads,
        CONFIG.n_kv_heads,
        CONFIG.head_dim,
        CONFIG.vocab_size,
        CONFIG.dtype,
    ) == (2, 16, 4, 2, 4, 256, "float32")


def test_first_call_shapes_match_section_7_11(calls):
    _, first, _ = calls
    layer = first.prefill.layers[0]
    assert list(first.input_ids.shape) == [1, 86]
    assert first.prefill.layers[-1].residual_out == [1, 86, 16]
    assert [rec.cache_k for rec in first.prefill.layers] == [[1, 2, 86, 4]] * 2
    assert [rec.cache_v for rec in first.prefill.layers] == [[1, 2, 86, 4]] * 2
    assert list(first.prefill.next_logits.shape) == [1, 256]
    assert layer.q == [1, 4, 86, 4], f"query heads: {layer.q}"
    assert first.prefill.next_logits.dtype == np.float32


def test_grammar_masked_greedy_produces_the_27_token_proposal(calls):
    _, first, _ = calls
    assert len(first.decode.token_ids) == 27, f"{len(first.decode.token_ids)} proposal tokens, source says 27"
    assert first.decode.finish_reason == "tool_proposal_complete"
    assert json.loads(first.decode.text) == TARGET_ARGUMENTS


def test_second_call_reuses_86_prefix_positions_and_prefills_46(calls):
    _, _, second = calls
    assert (second.input_token_count, second.reused_prefix_tokens, second.prefilled_tokens) == (132, 86, 46)
    assert second.prefill.layers[0].cache_k == [1, 2, 132, 4]


def test_reused_prefix_logits_equal_a_from_scratch_prefill(calls):
    decoder, _, second = calls
    reused = second.first_logits
    scratch = decoder.full_logits(second.input_ids)[0, -1]
    gap = float(np.max(np.abs(reused.astype(np.float64) - scratch)))
    assert gap < 1e-4, f"prefix-reuse logits differ from a from-scratch prefill by {gap:.2e}"
    assert int(np.argmax(reused)) == int(np.argmax(scratch))


def test_summary_is_the_source_sentence_then_eos(calls):
    _, _, second = calls
    assert second.decode.text == TARGET_SUMMARY
    assert second.decode.finish_reason == "EOS"


def test_output_head_fit_refuses_inseparable_states():
    states = np.array([[1.0, 0.0], [1.0, 0.0]])
    allowed = np.ones((2, 3), dtype=bool)
    with pytest.raises(ValueError, match="did not separate decision state"):
        fit_output_head(states, np.array([0, 1]), allowed, max_epochs=50)
