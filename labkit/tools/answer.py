"""The answer-slot mask of the second model call: what mc_02 may write about a tool result.

mc_02 must state nothing the tool result or the confirmed Invocation contradicts, so the runtime reads
the result's fields itself (``result_kind``) and derives the one sentence — the *frame* — the answer may
become: ``created`` (date and time said in the runtime's zone, the title copied), ``not_committed``,
``unavailable``, or ``unclear`` for anything else (also, untitled, when the title cannot be spelled).

The frame f = (f_1, …, f_n) is spelled by the tokenizer once; after k answer tokens with
text ``s``:  allowed[v] = (f_1…f_k spells s and f_{k+1} = v),  allowed[EOS] = (s = f).
The model still runs its forward pass and picks every token by masked greedy.
"""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Self
from zoneinfo import ZoneInfo

import numpy as np

#: §7.10 says greedy_with_json_grammar for both calls; mc_02 writes a sentence, so it names its own mask.
ANSWER_STRATEGY = "greedy_with_answer_slots"
TIMEZONE = "Asia/Shanghai"  # §7.10: the runtime's zone, in which every time is said
EVENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: the sentence when the title itself cannot be spelled
UNCLEAR_UNTITLED = "无法确认创建提醒：请确认日历。"


#: what t10 carries of the service's result into mc_02's prompt: the facts the answer may state; not
#: ``committed_at``, the service's own clock (with it mc_02's prompt would be 159 tokens, not the chapter's 132).
TOOL_MESSAGE_FIELDS = ("status", "event_id", "start")


def tool_message(result: dict, call_id: str) -> dict:
    """t10: ``call_id`` and the result's ``TOOL_MESSAGE_FIELDS`` (None when not sent); refused: an ``ok``
    lacking one, a result whose ``committed`` or ``error`` contradicts its status."""
    if not isinstance(result, dict) or not isinstance(result.get("status"), str):
        raise ValueError(f"the service's result must be a dict with a 'status' string, got {result!r}")
    ok = result["status"] == "ok"
    missing = [k for k in TOOL_MESSAGE_FIELDS if k not in result]
    if ok and missing:
        raise ValueError(f"the service's result says ok but lacks {missing}: {result!r}")
    if result.get("committed", ok) is not ok or (ok and result.get("error") is not None):
        raise ValueError(f"the service's result contradicts its status {result['status']!r}: {result!r}")
    return {"tool_call_id": call_id, **{k: result.get(k) for k in TOOL_MESSAGE_FIELDS}}


def clock_words(start: str, timezone: str = TIMEZONE) -> tuple[str, str]:
    """``start`` (RFC 3339 with an offset or Z) → (date words, time words) in ``timezone``.

    >>> clock_words("2026-07-20T01:00:00Z")
    ('2026 年 7 月 20 日', '上午 9:00')
    """
    moment = start_moment(start)
    if moment is None:
        raise ValueError(
            f"start must be an RFC 3339 date-time with an offset, such as 2026-07-20T09:00:00+08:00, got {start!r}"
        )
    local = moment.astimezone(ZoneInfo(timezone))
    hour = local.hour if local.hour <= 12 else local.hour - 12
    half = "上午" if local.hour < 12 else "下午"
    return f"{local.year} 年 {local.month} 月 {local.day} 日", f"{half} {hour}:{local.minute:02d}"


def start_moment(start, timezone: str = TIMEZONE) -> datetime | None:
    """The instant ``start`` names; None without an offset, off a whole minute (in its own offset or
    by an offset with seconds), or outside what ``timezone``'s calendar can say (year 1, year 9999)."""
    try:
        moment = datetime.fromisoformat(start)
    except (TypeError, ValueError):  # not a string, or not a date-time
        return None
    if moment.tzinfo is None or moment.second or moment.microsecond:
        return None
    if moment.utcoffset() % timedelta(minutes=1):
        return None  # +08:00:30: a whole minute there is 8:59:30 here
    try:
        moment.astimezone(ZoneInfo(timezone))
    except (OverflowError, ValueError):
        return None
    return moment


def frame_sentences(title: str, start: str | None = None, timezone: str = TIMEZONE) -> dict[str, str]:
    """Every kind's sentence for ``title`` (``created`` only with a ``start``): every kind, not just the one an
    answer uses, since the fixture recipe (``booktools.recipes.tools.fitting_sequences``) fits the head with the
    competing sentences, so that it must read the status."""
    frames = {}
    if start is not None:
        date, time = clock_words(start, timezone)
        frames["created"] = f"已在 {date}{time} 创建“{title}”提醒。"
    frames["not_committed"] = f"没有创建“{title}”提醒：日历未提交。"
    frames["unavailable"] = f"暂时无法创建“{title}”提醒，请稍后再试。"
    frames["unclear"] = f"无法确认创建“{title}”提醒：请确认日历。"
    return frames


def result_kind(tool_message: dict, title: str, approved_start: str | None = None, call_id: str | None = None) -> str:
    """The one kind of sentence the result's fields allow, checked against the confirmed Invocation's
    ``approved_start`` and the proposal's ``call_id`` when given.

    ``created``: status exactly ``ok``, an event ID, a whole-minute start naming the approved instant, no
    field saying otherwise; ``not_committed`` / ``unavailable``: that status and neither an event ID nor a start
    (the service wrote nothing); ``unclear``: anything else."""
    if not isinstance(tool_message, dict):
        raise ValueError(f"tool_message must be a dict (the tool result), got {type(tool_message).__name__}")
    status, event_id, start = (tool_message.get(k) for k in ("status", "event_id", "start"))
    if tool_message.get("title", title) != title:
        return "unclear"  # the result speaks of another reminder than the proposal
    if call_id is not None and tool_message.get("tool_call_id") != call_id:
        return "unclear"  # the result answers another call, or does not say which
    if tool_message.get("error") is not None or tool_message.get("committed", status == "ok") != (status == "ok"):
        return "unclear"  # a field beside the status says otherwise
    if status == "ok":
        moment = start_moment(start) if isinstance(event_id, str) and EVENT_ID.fullmatch(event_id) else None
        approved = start_moment(approved_start) if approved_start is not None else moment
        return "created" if moment is not None and moment == approved else "unclear"
    if status in ("not_committed", "unavailable") and event_id is None and start is None:
        return status
    return "unclear"


def answer_frames(
    arguments: dict, tool_message: dict, timezone: str = TIMEZONE, approved: dict | None = None
) -> dict[str, str]:
    """{kind: sentence}, the one sentence mc_02 may write for ``tool_message``; ``approved``: the confirmed
    Invocation's arguments and ``tool_call_id``."""
    title = arguments.get("title") if isinstance(arguments, dict) else None
    if not isinstance(title, str) or not title:
        raise ValueError(f"arguments must carry the proposal's 'title', got {arguments!r}")
    approved = approved or {}
    kind = result_kind(tool_message, title, approved.get("start"), approved.get("tool_call_id"))
    start = tool_message["start"] if kind == "created" else None
    return {kind: frame_sentences(title, start, timezone)[kind]}


@dataclass(frozen=True)
class AnswerSlots:
    """The mask over ``frames`` (name → sentence), each spelled as token IDs in ``spelled``."""

    frames: dict
    spelled: dict
    eos_id: int

    @classmethod
    def for_result(
        cls, arguments: dict, tool_message: dict, tokenizer, timezone: str = TIMEZONE, approved: dict | None = None
    ) -> Self:
        frames = answer_frames(arguments, tool_message, timezone, approved)
        try:
            return cls.of(frames, tokenizer)
        except ValueError:  # a title the tokenizer cannot spell: say the outcome is unclear, untitled
            return cls.of({"unclear": UNCLEAR_UNTITLED}, tokenizer)

    @classmethod
    def of(cls, frames: dict, tokenizer) -> Self:
        spelled = {name: tuple(tokenizer.encode(sentence)) for name, sentence in frames.items()}
        return cls(dict(frames), spelled, tokenizer.id_of("<|eos|>"))

    @property
    def max_tokens(self) -> int:
        """The longest frame's tokens and its EOS: a decode limit no frame is cut by."""
        return max(len(ids) for ids in self.spelled.values()) + 1

    def mask(self, text: str, pieces) -> np.ndarray:
        """allowed [V] after answer text ``text``."""
        allowed = np.zeros(len(pieces), dtype=bool)
        for ids in self.spelled.values():
            k, written = 0, ""
            while k < len(ids) and len(written) < len(text):
                written += pieces[ids[k]]
                k += 1
            if written == text:
                if k < len(ids):
                    allowed[ids[k]] = True
                else:
                    allowed[self.eos_id] = True
        return allowed

    def frame_of(self, text: str) -> str | None:
        """The name of the frame ``text`` is, or None."""
        return next((name for name, s in self.frames.items() if s == text), None)
