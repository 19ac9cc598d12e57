"""mc_02 reads the tool result: the same fixture weights write the right summary for each
result; the forward pass still reads the status, and the mask allows only the sentence the
result's fields allow, its slots copied from the result."""

import json

import numpy as np
import pytest

from booktools.recipes.tools import SUMMARY_CASES, TARGET_SUMMARY
from labkit.tools.answer import ANSWER_STRATEGY, AnswerSlots, answer_frames, clock_words
from labkit.tools.calls import first_model_call, second_model_call
from labkit.tools.config import USER_TEXT
from labkit.tools.fixture import TARGET_ARGUMENTS
from labkit.tools.model import load_decoder
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec

TOK = ToolTokenizer()
EOS = TOK.id_of("<|eos|>")


def ok(event_id: str, start: str) -> dict:
    return {"tool_call_id": "p_01", "status": "ok", "event_id": event_id, "start": start}


@pytest.fixture(scope="module")
def model():
    decoder, spec = load_decoder(), load_toolspec()
    return decoder, spec, first_model_call(decoder, spec, USER_TEXT)


def summarize(model, message):
    decoder, spec, first = model
    return second_model_call(decoder, spec, USER_TEXT, first, message)


# the fitted results, plus results the head never saw (other hours, another month)
RESULTS = [
    (ok("evt_6K2", "2026-07-20T09:00:00+08:00"), TARGET_SUMMARY),
    (ok("evt_6K3", "2026-07-20T09:00:00+08:00"), TARGET_SUMMARY),
    (ok("evt_6K2", "2026-07-20T10:00:00+08:00"), "已在 2026 年 7 月 20 日上午 10:00 创建“带护照”提醒。"),
    (ok("evt_6K4", "2026-07-21T08:30:00+08:00"), "已在 2026 年 7 月 21 日上午 8:30 创建“带护照”提醒。"),
    ({"tool_call_id": "p_01", "status": "not_committed"}, "没有创建“带护照”提醒：日历未提交。"),
    ({"tool_call_id": "p_01", "status": "unavailable"}, "暂时无法创建“带护照”提醒，请稍后再试。"),
    (ok("evt_9ZZ", "2026-07-20T11:00:00+08:00"), "已在 2026 年 7 月 20 日上午 11:00 创建“带护照”提醒。"),
    (ok("evt_6K2", "2026-07-20T14:30:00+08:00"), "已在 2026 年 7 月 20 日下午 2:30 创建“带护照”提醒。"),
    (ok("evt_6K5", "2026-08-01T07:05:00+08:00"), "已在 2026 年 8 月 1 日上午 7:05 创建“带护照”提醒。"),
]


@pytest.mark.parametrize(("message", "summary"), RESULTS, ids=[json.dumps(m)[20:60] for m, _ in RESULTS])
def test_each_tool_result_gets_its_own_summary(model, message, summary):
    call = summarize(model, message)
    assert call.decode.text == summary, f"for {message} the model wrote {call.decode.text!r}"
    assert call.decode.finish_reason == "EOS"


def test_the_chapters_result_keeps_the_chapters_figures(model):
    call = summarize(model, SUMMARY_CASES[0][0])
    assert call.decode.text == "已在 2026 年 7 月 20 日上午 9:00 创建“带护照”提醒。"
    assert (call.input_token_count, call.reused_prefix_tokens, call.prefilled_tokens) == (132, 86, 46)
    assert len(call.decode.token_ids) == 20


def test_the_recipes_cases_are_at_least_four_distinct_results_and_three_summaries():
    assert len({json.dumps(m, sort_keys=True) for m, _ in SUMMARY_CASES}) >= 4
    assert len({s for _, s in SUMMARY_CASES}) >= 3


def test_the_head_reads_the_status_and_the_mask_allows_only_the_results_kind(model):
    """The head still reads the status (its raw argmax among the three openers is the right
    one on the fitted results), but the runtime no longer leaves the kind to it: step 1
    allows only the opener of the kind the result's fields allow."""
    openers = [TOK.id_of(p) for p in ("已在", "没有", "暂时")]
    for message, frame in (
        (SUMMARY_CASES[0][0], "已在"),
        ({"tool_call_id": "p_01", "status": "not_committed"}, "没有"),
        ({"tool_call_id": "p_01", "status": "unavailable"}, "暂时"),
    ):
        step = summarize(model, message).decode.steps[0]
        assert step.allowed_ids == (TOK.id_of(frame),)
        assert step.chosen_id == TOK.id_of(frame)
        assert max(openers, key=lambda i: step.raw_logits[i]) == TOK.id_of(frame), "the head's own reading"


def test_the_status_changes_the_first_logits_through_the_forward_pass(model):
    """Only the status differs; the raw logits of the frame openers change sides (the head was
    fitted with every frame competing, so the model reads the status, not the mask)."""
    created, missing, later = TOK.id_of("已在"), TOK.id_of("没有"), TOK.id_of("暂时")
    a = summarize(model, SUMMARY_CASES[0][0]).first_logits
    b = summarize(model, {"tool_call_id": "p_01", "status": "not_committed"}).first_logits
    c = summarize(model, {"tool_call_id": "p_01", "status": "unavailable"}).first_logits
    assert a[created] > max(a[missing], a[later])
    assert b[missing] > max(b[created], b[later])
    assert c[later] > max(c[created], c[missing])


def test_slots_copy_the_result_and_nothing_else():
    slots = AnswerSlots.for_result(TARGET_ARGUMENTS, ok("evt_6K2", "2026-07-20T10:00:00+08:00"), TOK)
    after = "已在 2026 年 7 月 20 日上午 "
    allowed = [TOK.pieces[i] for i in np.flatnonzero(slots.mask(after, TOK.pieces))]
    assert allowed == ["10"], allowed  # "9" is not in this result
    first = [TOK.pieces[i] for i in np.flatnonzero(slots.mask("", TOK.pieces))]
    assert first == ["已在"], "an ok result with its evidence allows the created sentence only"
    assert not slots.mask("已在", TOK.pieces)[EOS] and slots.mask(slots.frames["created"], TOK.pieces)[EOS]


def test_no_creation_is_claimed_without_the_commits_evidence():
    for message in (
        {"tool_call_id": "p_01", "status": "not_committed"},
        {"tool_call_id": "p_01", "status": "ok", "start": "2026-07-20T09:00:00+08:00"},
    ):
        assert list(answer_frames(TARGET_ARGUMENTS, message)) == (
            ["not_committed"] if message["status"] == "not_committed" else ["unclear"]
        )


def test_without_the_slot_mask_the_head_alone_does_not_write_the_summary(model):
    """The ablation: the plain answer mask (every ordinary piece) is not what the weights were
    fitted for, which is why mc_02 runs the slot mask and says so."""
    decoder, spec, first = model
    from labkit.tools.calls import _feeder, greedy_decode

    call = summarize(model, SUMMARY_CASES[2][0])
    # a plain answer: every ordinary piece, and EOS; no other control token
    mask = np.array([not TOK.is_control(i) for i in range(TOK.vocab_size)])
    mask[EOS] = True
    plain = greedy_decode(
        call.first_logits,
        _feeder(decoder, call.cache.truncated(call.input_token_count)),
        lambda _t: mask,
        TOK.pieces,
        {EOS: "EOS"},
        48,
    )
    assert plain.text != SUMMARY_CASES[2][1]
    assert ANSWER_STRATEGY == "greedy_with_answer_slots"


def test_clock_words_and_bad_input():
    assert clock_words("2026-07-20T09:00:00+08:00") == ("2026 年 7 月 20 日", "上午 9:00")
    assert clock_words("2026-07-20T12:05:00+08:00")[1] == "下午 12:05"
    with pytest.raises(ValueError, match="start must be an RFC 3339"):
        clock_words("tomorrow 9am")
    with pytest.raises(ValueError, match="start must be an RFC 3339"):
        clock_words("2026-07-20T09:00:00")  # no offset: no instant to say in Asia/Shanghai
    assert clock_words("2026-07-20T01:00:00Z") == ("2026 年 7 月 20 日", "上午 9:00")
    with pytest.raises(ValueError, match="tool_message must be a dict"):
        answer_frames(TARGET_ARGUMENTS, ["ok"])
    assert list(answer_frames(TARGET_ARGUMENTS, {"event_id": "evt_6K2"})) == ["unclear"]  # no status
    with pytest.raises(ValueError, match="arguments must carry the proposal's 'title'"):
        answer_frames({}, {"status": "ok"})
