"""The public checks of the preface and trace one (``labkit.check.trace_one``), as a class copy runs them
(the key set aside): typical wrong answers are caught by a property, at their case or event, with the
reader's own value shown. No right answer lives here (those are in answer_key/tests/)."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import without_key
from labkit.check.trace_one_decode import CacheView, DecoderParts
from labkit.core import events
from labkit.nn import Decoder
from labkit.text.model import load_decoder


@pytest.fixture(autouse=True)
def class_copy():
    """Every test here sees what a class copy sees: no key attached."""
    with without_key():
        yield
    check.core.reset_attempts()


# -- the self-tests: their answers are the kit's runs (no key needed) ------------------------------


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("rms_norm_row", 1.2 + 0.011),
        ("rms_norm_row", 0.6),
        ("eos_fault_first_event", "e06"),
        ("eos_in_control_step", 4),
    ],
)
def test_a_prediction_is_graded_without_the_key(name, wrong):
    """A self-test is judged in a class copy (failed, not "unverified"), and it counts for no grade."""
    result = check.exercises()[name](wrong)
    assert not result.passed and result.status == "failed" and result.got == wrong, repr(result)
    assert check.exercises()[name].points == 0


def test_eos_in_control_step_refuses_the_masked_ids_step_and_a_string():
    """The defect of issue 40: the question asks for the selection; step 1 (the masked-IDs record) is wrong."""
    assert not check.eos_in_control_step(1).passed
    assert check.eos_in_control_step("5").status == "failed"


# -- cut_off_events --------------------------------------------------------------------------------


def _one_link_at_a_time(trace):
    """validate_trace's rule transcribed: each event's own link only."""
    seen, bad = set(), []
    for index, event in enumerate(trace):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad


def test_the_public_damaged_traces_are_envelopes_of_the_trace_record():
    """The check's own cases are valid envelopes (checked here once, not at every check)."""
    from labkit.check.trace_one import damaged_traces

    for _, trace in damaged_traces():
        for event in trace:
            events.validate_envelope(event)


def test_cut_off_events_that_judges_one_link_at_a_time_keeps_an_orphans_child():
    result = check.cut_off_events(_one_link_at_a_time)
    assert not result.passed and result.status == "failed"
    assert result.where == "case “a lost parent with a child”, e02", result.where
    assert result.got == ["e01"]


def test_cut_off_events_that_cuts_everything_after_a_break_is_caught_at_the_event_it_cut():
    def truncate(trace):
        first = next((i for i, e in enumerate(trace) if e["event_id"] in _one_link_at_a_time(trace)), len(trace))
        return [e["event_id"] for e in trace[first:]]

    result = check.cut_off_events(truncate)
    assert not result.passed and result.where == "case “a parent that points forward”, e02", result.where
    assert result.got == ["e01", "e02"]


def test_cut_off_events_in_the_wrong_order_or_with_unknown_ids_is_refused():
    result = check.cut_off_events(lambda trace: [e["event_id"] for e in reversed(trace)])
    assert not result.passed and result.where == "case “a well-formed tree”", result.where
    result = check.cut_off_events(lambda trace: ["e42"])
    assert not result.passed and result.got == ["e42"]
    result = check.cut_off_events(lambda trace: {"e01"})
    assert not result.passed and "a list of event IDs" in result.message


def test_the_public_traces_are_valid_envelopes_and_one_is_intact():
    from labkit.check.trace_one import damaged_traces

    traces = dict(damaged_traces())
    events.validate_trace(traces["a well-formed tree"])
    assert check.cut_off_events(lambda trace: []).where.startswith("case “a parent that points forward”, e01")


# -- no_repeat_ngram_mask ----------------------------------------------------------------------------


def test_a_mask_that_masks_nothing_is_caught_at_the_first_repeat():
    result = check.no_repeat_ngram_mask(lambda logits, selected, n: logits.copy())
    assert not result.passed and result.where == "case “n = 2 after 3 4 3”, result[4]", result.where
    assert result.got == pytest.approx(np.linspace(3.0, -1.0, 12, dtype=np.float32)[4])


def test_a_mask_that_writes_a_large_negative_number_is_caught():
    def large_negative(logits, selected, n):
        out = logits.copy()
        out[list(selected)] = -1e9  # "forbid" with a big number, and the wrong tokens too
        return out

    result = check.no_repeat_ngram_mask(large_negative)
    assert not result.passed and result.where.startswith("case “n = 2 after 3 4 3”, result[3]"), result.where
    assert result.got == -1e9


def test_a_mask_that_changes_its_input_or_its_dtype_is_refused():
    def in_place(logits, selected, n):
        logits[list(selected)] = -np.inf
        return logits

    assert "changed the logits it was given" in check.no_repeat_ngram_mask(in_place).message
    result = check.no_repeat_ngram_mask(lambda logits, selected, n: logits.astype(np.float64))
    assert not result.passed and "keep the logits' dtype float32" in result.message


def test_the_looping_request_loops_without_a_mask():
    """The runtime part of the check acts: without a mask the long request repeats 10 17."""
    from labkit.check.trace_one import looping_request

    _, with_mask = looping_request(2)
    selected = [
        e["payload"]["token_id"] for e in with_mask(lambda z, s, n: z.copy()) if e["event_type"] == "token.selected"
    ]
    assert selected == [14, 15, 16, 17, 10, 17, 10, 17, 10, 17, 10, 17]


# -- largest_min_p -------------------------------------------------------------------------------------


def test_largest_min_p_through_a_softmax_overflows_in_the_thousands():
    def through_softmax(logits, k):
        p = np.exp(logits) / np.sum(np.exp(logits))
        return float(np.sort(p)[-k] / p.max())

    result = check.largest_min_p(through_softmax)
    assert not result.passed and result.where == "case “logits in the thousands, k = 3”", result.where
    assert np.isnan(result.got)


@pytest.mark.parametrize(
    ("wrong", "where", "message"),
    [
        (lambda z, k: float(np.exp(np.sort(z)[-k - 1] - np.max(z))), "seeded", "a larger min_p still keeps"),
        (lambda z, k: float(np.exp(np.sort(z)[-k + 1] - np.max(z))) if k > 1 else 1.0, "seeded", "keeps fewer"),
        (lambda z, k: float(np.sort(z)[-k] - np.max(z)), "seeded", "a min_p lies in (0, 1]"),
    ],
)
def test_largest_min_p_off_by_one_or_in_logits_is_caught(wrong, where, message):
    result = check.largest_min_p(wrong)
    assert not result.passed and where in result.where and message in result.message, repr(result)


def test_largest_min_p_must_be_a_number():
    assert "one number" in check.largest_min_p(lambda z, k: "0.5").message


# -- decode_one ----------------------------------------------------------------------------------------


def test_decode_one_with_zero_logits_is_caught_at_the_first_decode():
    def zeros(decoder, cache, token_id):
        for layer in range(decoder.config.n_layers):
            k = np.zeros((1, decoder.config.n_kv_heads, 1, decoder.config.head_dim), dtype=np.float32)
            cache.append(layer, k, k)
        return np.zeros(decoder.config.vocab_size, dtype=np.float32)

    result = check.decode_one(zeros)
    assert not result.passed
    assert result.where.startswith("e08 decode.completed (step 1), field tensors.raw_logits"), result.where
    assert result.rule == "tensors"


def test_decode_one_cannot_borrow_the_librarys_decoder():
    """The routes of issue 40: the page's load_decoder, a Decoder rebuilt from the parts, the guarded methods."""
    borrowed = check.decode_one(
        lambda decoder, cache, token_id: load_decoder().decode_step([token_id], cache).next_logits[0]
    )
    assert not borrowed.passed and "raised TypeError" in borrowed.message, borrowed.message
    rebuilt = check.decode_one(
        lambda decoder, cache, token_id: (
            Decoder(decoder.config, decoder.weights).decode_step([token_id], cache).next_logits[0]
        )
    )
    assert not rebuilt.passed and "raised TypeError" in rebuilt.message, rebuilt.message
    guarded = check.decode_one(lambda decoder, cache, token_id: decoder.decode_step([token_id], cache).next_logits[0])
    assert not guarded.passed and "decoder.decode_step is the step you are writing" in guarded.message


def test_decode_one_that_appends_to_one_layer_only_is_named():
    def one_layer(decoder, cache, token_id):
        cache.append(0, cache.keys[0][..., -1:, :], cache.values[0][..., -1:, :])
        return np.zeros(decoder.config.vocab_size, dtype=np.float32)

    result = check.decode_one(one_layer)
    assert not result.passed and "different lengths [13, 12]" in result.message


def test_decode_one_returning_a_batch_of_rows_is_refused_with_the_shape():
    result = check.decode_one(lambda decoder, cache, token_id: np.zeros((1, 2, 20)))
    assert not result.passed and "shape [20] (or [1, 20]), got [1, 2, 20]" in result.message


def test_decoder_parts_are_plain_and_read_only():
    parts = DecoderParts(load_decoder())
    assert parts.config.model_id == "toy-decoder-v1" and parts.config.group_size == 2
    with pytest.raises(AttributeError, match="only .config, .weights"):
        parts.cache  # noqa: B018
    with pytest.raises(ValueError, match="read-only"):
        parts.weights.layers[0]["q"][0, 0] = 1.0
    with pytest.raises(TypeError):
        Decoder(parts.config, parts.weights)
    decoder = load_decoder()
    _, cache = decoder.prefill(np.array([[1, 2, 7]]))
    view = CacheView(cache)
    with pytest.raises(ValueError, match="read-only"):
        view.keys[0][0, 0, 0, 0] = 1.0
    with pytest.raises(TypeError):
        view.append(0, cache.keys[0][..., -1:, :], cache.values[0][..., -1:, :], finite=True)
