"""The second call never states what a field of the result contradicts or what the confirmed Invocation
disagrees with, and never crashes on a result it cannot say (issue 44 item 5): a property test over
offsets with seconds, years 0001–9999, characters the tokenizer lacks, every status spelling, and
missing, extra and mismatched fields; and t10's tool message refuses a result that contradicts itself."""

from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.tools.answer import UNCLEAR_UNTITLED, AnswerSlots, clock_words, start_moment, tool_message
from labkit.tools.tokenizer import ToolTokenizer

TOKENIZER = ToolTokenizer()
APPROVED = {"title": "带护照", "start": "2026-07-20T09:00:00+08:00", "tool_call_id": "p_01"}
SAME_INSTANT = ["2026-07-20T09:00:00+08:00", "2026-07-20T01:00:00Z", "2026-07-20T10:00:00+09:00"]

offsets = st.sampled_from(["Z", "+08:00", "+09:00", "-05:30", "+08:00:30", "+14:00", "-12:00", "", "+25:00"])
starts = st.one_of(
    st.none(),
    st.sampled_from(SAME_INSTANT + ["2026-07-20T10:00:00+08:00", "2026-07-20T09:00:30+08:00", "tomorrow", ""]),
    st.builds(
        lambda y, mo, d, h, mi, s, off: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{off}",
        st.integers(1, 9999),
        st.integers(1, 12),
        st.integers(1, 28),
        st.integers(0, 23),
        st.integers(0, 59),
        st.sampled_from([0, 0, 0, 30]),
        offsets,
    ),
)
statuses = st.sampled_from(["ok", "OK", "ok ", "Ok", "success", "not_committed", "unavailable", "error", "", None])
#: one change to a field of a right result: a value from the field's own strategy, or the field gone
CHANGES = {
    "status": statuses,
    "event_id": st.one_of(st.none(), st.sampled_from(["evt_6K2", "", "evt 6K2", "x" * 65])),
    "start": starts,
    "tool_call_id": st.sampled_from(["p_01", "p_02", None]),
    "committed": st.sampled_from([True, False, None, "yes"]),
    "error": st.sampled_from([None, "timeout", ""]),
    "title": st.sampled_from(["带护照", "带钥匙", ""]),
    "committed_at": st.just("2026-07-19T23:00:00+08:00"),
}
RIGHT = {"tool_call_id": "p_01", "status": "ok", "event_id": "evt_6K2", "start": "2026-07-20T09:00:00+08:00"}


@st.composite
def messages(draw):
    """A right result with up to three fields changed or dropped: the near misses a grounding check
    must catch, drawn far more often than a blind draw over every field would reach them."""
    message = dict(RIGHT)
    for field in draw(st.lists(st.sampled_from(sorted(CHANGES)), max_size=3, unique=True)):
        if field in message and draw(st.booleans()):
            del message[field]
        else:
            message[field] = draw(CHANGES[field])
    return message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=messages(), title=st.sampled_from(["带护照", "带护照𝄞", "ⅩⅣ"]))
def test_the_answer_states_only_what_the_result_and_the_invocation_agree_on(message, title):
    slots = AnswerSlots.for_result({"title": title}, message, TOKENIZER, approved={**APPROVED, "title": title})
    (kind,) = slots.frames
    sentence = slots.frames[kind]
    assert set(slots.spelled) == {kind} and slots.spelled[kind]  # always a sentence it can spell
    if kind == "created":
        assert message["status"] == "ok" and message.get("tool_call_id") == "p_01"
        assert message.get("committed", True) is True and message.get("error") is None
        assert message.get("title", title) == title and message["start"] in SAME_INSTANT
        assert "".join(clock_words(APPROVED["start"])) in sentence and title in sentence
    elif kind in ("not_committed", "unavailable"):
        assert message["status"] == kind and message.get("event_id") is None and message.get("start") is None
    else:
        assert kind == "unclear" and ("确认" in sentence)
    if "𝄞" in title or "Ⅹ" in title:
        assert sentence == UNCLEAR_UNTITLED or title in sentence


@pytest.mark.parametrize(
    ("start", "says"),
    [
        ("2026-07-20T09:00:00+08:00:30", None),  # a whole minute there is 8:59:30 in Shanghai
        ("0001-01-01T00:00:00+08:00", None),  # before year 1 in UTC
        ("9999-12-31T23:59:00-08:00", None),  # after year 9999 in Shanghai
        ("2026-07-20T01:00:00Z", datetime.fromisoformat("2026-07-20T09:00:00+08:00")),
    ],
)
def test_a_start_the_zone_cannot_say_names_no_instant(start, says):
    assert start_moment(start) == says


def test_a_start_other_than_the_approved_one_is_not_reported_as_created():
    result = {"status": "ok", "event_id": "evt_6K2", "start": "2026-07-20T10:00:00+08:00", "tool_call_id": "p_01"}
    slots = AnswerSlots.for_result({"title": "带护照"}, result, TOKENIZER, approved=APPROVED)
    assert list(slots.frames) == ["unclear"]


@pytest.mark.parametrize(
    ("result", "refused"),
    [
        ({"status": "ok", "event_id": "evt_6K2", "committed_at": "x", "start": "2026-07-20T09:00:00+08:00"}, None),
        ({"status": "not_committed", "committed": False}, None),
        ({"status": "ok", "event_id": "evt_6K2", "committed_at": "x"}, "lacks \\['start'\\]"),
        ({"status": "ok", "event_id": "e", "start": "s", "committed": False}, "contradicts its status 'ok'"),
        ({"status": "ok", "event_id": "e", "start": "s", "error": "timeout"}, "contradicts its status 'ok'"),
        ({"status": "unavailable", "committed": True}, "contradicts its status 'unavailable'"),
        (["ok"], "must be a dict with a 'status' string"),
    ],
)
def test_t10_carries_three_fields_and_refuses_a_result_that_contradicts_itself(result, refused):
    if refused is None:
        message = tool_message(result, "p_01")
        assert list(message) == ["tool_call_id", "status", "event_id", "start"] and "committed_at" not in message
    else:
        with pytest.raises(ValueError, match=refused):
            tool_message(result, "p_01")
