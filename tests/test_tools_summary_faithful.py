"""§7.14: the second call never states what the tool result contradicts.

Hypothesis generates tool results — the status in every spelling seen, missing, empty and
odd fields, every day of a month, start times in several offsets and ``Z``, titles the
result echoes — and runs the real second call (forward pass, masked greedy) on each.  The
generator knows what each field means; the summary is parsed back and held against it:
its kind against the status, its date and time against the start read in Asia/Shanghai,
its title against the proposal's, and "unclear" wherever the result allows no true sentence.
"""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.tools.answer import AnswerSlots, answer_frames
from labkit.tools.calls import first_model_call, greedy_decode, second_model_call
from labkit.tools.config import USER_TEXT
from labkit.tools.model import load_decoder
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec

TOK = ToolTokenizer()
SHANGHAI = ZoneInfo("Asia/Shanghai")
TITLE = "带护照"
ABSENT = object()
CREATED = re.compile(r"已在 (\d+) 年 (\d+) 月 (\d+) 日(上午|下午) (\d+):(\d\d) 创建“(.*)”提醒。")
OPENERS = {"已在": "created", "没有创建": "not_committed", "暂时无法": "unavailable", "无法确认": "unclear"}


@pytest.fixture(scope="module")
def model():
    decoder, spec = load_decoder(), load_toolspec()
    return decoder, spec, first_model_call(decoder, spec, USER_TEXT)


# -- generators: (value, what it means) ------------------------------------------------------------
STATUSES = ["ok", "OK", "Ok", " ok", "ok ", "not_committed", "NOT_COMMITTED", "not-committed", "unavailable"]
STATUSES += ["Unavailable", "outcome_unknown", "committed", "error", ""]
status = st.one_of(st.sampled_from(STATUSES), st.sampled_from([None, 1, True, ABSENT]))
good_id = st.from_regex(r"evt_[A-Za-z0-9]{1,8}", fullmatch=True).map(lambda s: (s, True))
bad_id = st.sampled_from(["", " ", "evt 6K2", "evt_6K2 ", None, 0, ["evt_6K2"], ABSENT]).map(lambda v: (v, False))
OFFSETS = {"+08:00": 8 * 60, "+09:00": 9 * 60, "Z": 0, "+00:00": 0, "-05:00": -5 * 60, "+05:30": 5 * 60 + 30}


@st.composite
def good_start(draw):
    """A whole-minute start with an offset, on any day of a month: (string, instant)."""
    month = draw(st.sampled_from([7, 2, 12]))
    last = {7: 31, 2: 28, 12: 31}[month]
    day, hour, minute = draw(st.integers(1, last)), draw(st.integers(0, 23)), draw(st.integers(0, 59))
    offset = draw(st.sampled_from(sorted(OFFSETS)))
    text = f"2026-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00{offset}"
    return text, datetime.fromisoformat(text.replace("Z", "+00:00"))


bad_start = st.sampled_from(
    ["2026-07-20T09:00:00", "2026-07-20T09:00:30+08:00", "tomorrow 9am", "", "2026-07-32T09:00:00+08:00"]
    + [None, 20260720, ABSENT]
).map(lambda v: (v, None))
PIECES = ["带", "护照", "提醒", "我", "明天", "日历", "提交", "确认", "A", "b", " ", "7", "-"]


def encodable(text: str) -> bool:
    """Whether greedy longest match spells ``text`` (" 日" + "历" is a dead end, for one)."""
    try:
        return bool(TOK.encode(text))
    except ValueError:
        return False


echo = st.one_of(
    st.just((ABSENT, True)),
    st.just((TITLE, True)),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=40)
    .map("".join)
    .filter(encodable)
    .map(lambda t: (t, t == TITLE)),
)


@st.composite
def tool_result(draw):
    """(tool message, expected kind, expected instant or None)."""
    s = draw(status)
    event_id, id_ok = draw(st.one_of(good_id, bad_id))
    start, instant = draw(st.one_of(good_start(), bad_start))
    title, title_ok = draw(echo)
    fields = {"tool_call_id": "p_01", "status": s, "event_id": event_id, "start": start, "title": title}
    message = {k: v for k, v in fields.items() if v is not ABSENT}
    nothing_written = event_id in (None, ABSENT) and start in (None, ABSENT)
    if s == "ok" and id_ok and instant is not None and title_ok:
        return message, "created", instant
    if s in ("not_committed", "unavailable") and nothing_written and title_ok:
        return message, s, None
    return message, "unclear", None


def kind_of(summary: str) -> str:
    return next(kind for opener, kind in OPENERS.items() if summary.startswith(opener))


def said_time(summary: str) -> tuple[int, int, int, int, int]:
    year, month, day, half, hour, minute, title = CREATED.fullmatch(summary).groups()
    assert title == TITLE
    hour24 = int(hour) if half == "上午" else (int(hour) + 12 if int(hour) < 12 else 12)
    return int(year), int(month), int(day), hour24, int(minute)


def assert_faithful(summary: str, kind: str, instant) -> None:
    assert kind_of(summary) == kind, f"{summary!r} is not a {kind} sentence"
    assert f"“{TITLE}”" in summary
    assert "evt" not in summary  # no event ID is stated, so none can be another than the result's
    if kind == "created":
        local = instant.astimezone(SHANGHAI)
        assert said_time(summary) == (local.year, local.month, local.day, local.hour, local.minute), summary


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(tool_result())
def test_the_summary_never_contradicts_the_result(model, case):
    message, kind, instant = case
    decoder, spec, first = model
    call = second_model_call(decoder, spec, USER_TEXT, first, message)
    assert call.decode.finish_reason == "EOS"
    assert_faithful(call.decode.text, kind, instant)


# the cases the audit of issue 30 found wrong, each with what is true of it
AUDIT = [
    ({"status": "ok", "event_id": "evt_6K2"}, "unclear", None),
    ({"status": "ok", "start": "2026-07-20T09:00:00+08:00"}, "unclear", None),
    ({"status": "ok", "event_id": "", "start": "2026-07-20T09:00:00+08:00"}, "unclear", None),
    ({"status": "OK", "event_id": "evt_6K2", "start": "2026-07-20T09:00:00+08:00"}, "unclear", None),
    *[
        ({"status": "ok", "event_id": "evt_9Z9", "start": f"2026-07-{d}T09:00:00+08:00"}, "created", d)
        for d in range(20, 32)
    ],
    ({"status": "ok", "event_id": "evt_6K2", "start": "2026-07-20T10:00:00+09:00"}, "created", 20),
    ({"status": "ok", "event_id": "evt_6K2", "start": "2026-07-20T01:00:00Z"}, "created", 20),
]


@pytest.mark.parametrize(("message", "kind", "day"), AUDIT, ids=[str(m)[:70] for m, _, _ in AUDIT])
def test_the_audits_results_get_true_sentences(model, message, kind, day):
    decoder, spec, first = model
    summary = second_model_call(decoder, spec, USER_TEXT, first, {"tool_call_id": "p_01", **message}).decode.text
    assert kind_of(summary) == kind, summary
    if kind == "created":
        assert said_time(summary) == (2026, 7, day, 9, 0), summary


@pytest.mark.parametrize("offset", sorted(OFFSETS))
def test_every_day_of_a_month_in_every_offset(model, offset):
    decoder, spec, first = model
    for day in range(1, 32):
        start = f"2026-07-{day:02d}T09:00:00{offset}"
        message = {"tool_call_id": "p_01", "status": "ok", "event_id": "evt_9Z9", "start": start}
        summary = second_model_call(decoder, spec, USER_TEXT, first, message).decode.text
        assert_faithful(summary, "created", datetime.fromisoformat(start.replace("Z", "+00:00")))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.sampled_from(PIECES + ["护照"] * 3), min_size=1, max_size=80)
    .map("".join)
    .filter(lambda t: len(t) <= 80 and encodable(t)),
    good_start(),
    st.integers(0, 2**32 - 1),
)
def test_the_mask_alone_writes_the_true_sentence_for_any_logits_and_long_titles(title, start, seed):
    """Whatever the logits (random here), masked greedy writes the frame, however long the title."""
    message = {"tool_call_id": "p_01", "status": "ok", "event_id": "evt_6K2", "start": start[0]}
    slots = AnswerSlots.for_result({"title": title}, message, TOK)
    rng = np.random.default_rng(seed)
    out = greedy_decode(
        rng.normal(size=TOK.vocab_size),
        lambda _t: rng.normal(size=TOK.vocab_size),
        lambda text: slots.mask(text, TOK.pieces),
        TOK.pieces,
        {slots.eos_id: "EOS"},
        slots.max_tokens,
    )
    assert out.finish_reason == "EOS" and out.text == answer_frames({"title": title}, message)["created"]
    local = start[1].astimezone(SHANGHAI)
    assert out.text.startswith(f"已在 {local.year} 年 {local.month} 月 {local.day} 日") and f"“{title}”" in out.text
