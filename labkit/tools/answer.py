"""The answer-slot mask of the second model call: what mc_02 may write about a tool result.

The second call must not invent a fact the tool result does not carry.  The runtime
therefore derives, from the proposal's arguments and the tool message, the few sentences
an answer may become — its *frames* — with every slot already filled by copying:

* ``created`` (offered only when the result is ``status: ok`` with an ``event_id`` and a
  ``start``: a creation is claimed only with the commit's evidence in hand) — date and
  time copied from ``start``, the title copied from the proposal;
* ``not_committed`` — the service said it wrote nothing;
* ``unavailable`` — the service could not be reached; try again later.

Each frame is spelled by the tokenizer once, f = (f_1, …, f_n).  After k answer tokens
whose text is ``s``, the mask is

    allowed[v]   = some frame has f_1…f_k spelling s and f_{k+1} = v     (ordinary pieces v)
    allowed[EOS] = s is a whole frame

so the slots can only hold the result's values, while *which* frame is written is the
model's choice: the raw logits of the first step, computed by the forward pass over the
tool message, decide it.  Shapes: ``mask`` returns a boolean vector [V].
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

#: what the runtime calls the decoding of mc_02 (the JSON grammar constrains tool-call
#: arguments; mc_02 opens no tool call, so its mask is this module's answer slots)
ANSWER_STRATEGY = "greedy_with_answer_slots"


def clock_words(start: str) -> tuple[str, str]:
    """``start`` (RFC 3339 with offset) → (date words, time words) in the start's own offset.

    >>> clock_words("2026-07-20T09:00:00+08:00")
    ('2026 年 7 月 20 日', '上午 9:00')
    """
    try:
        moment = datetime.fromisoformat(start)
    except (TypeError, ValueError):
        raise ValueError(
            f"start must be an RFC 3339 date-time such as 2026-07-20T09:00:00+08:00, got {start!r}"
        ) from None
    date = f"{moment.year} 年 {moment.month} 月 {moment.day} 日"
    hour = moment.hour if moment.hour <= 12 else moment.hour - 12
    half = "上午" if moment.hour < 12 else "下午"
    return date, f"{half} {hour}:{moment.minute:02d}"


def answer_frames(arguments: dict, tool_message: dict) -> dict[str, str]:
    """The sentences mc_02 may write, slots filled from ``arguments`` and ``tool_message``."""
    if not isinstance(tool_message, dict) or "status" not in tool_message:
        raise ValueError(f"tool_message must be a dict with a 'status', got {tool_message!r}")
    title = arguments.get("title") if isinstance(arguments, dict) else None
    if not isinstance(title, str) or not title:
        raise ValueError(f"arguments must carry the proposal's 'title', got {arguments!r}")
    frames = {}
    if tool_message["status"] == "ok" and tool_message.get("event_id") and tool_message.get("start"):
        date, time = clock_words(tool_message["start"])
        frames["created"] = f"已在 {date}{time} 创建“{title}”提醒。"
    frames["not_committed"] = f"没有创建“{title}”提醒：日历未提交。"
    frames["unavailable"] = f"暂时无法创建“{title}”提醒，请稍后再试。"
    return frames


@dataclass(frozen=True)
class AnswerSlots:
    """The mask over ``frames`` (name → sentence), each spelled as token IDs in ``spelled``."""

    frames: dict
    spelled: dict
    eos_id: int

    @classmethod
    def for_result(cls, arguments: dict, tool_message: dict, tokenizer) -> AnswerSlots:
        return cls.of(answer_frames(arguments, tool_message), tokenizer)

    @classmethod
    def of(cls, frames: dict, tokenizer) -> AnswerSlots:
        spelled = {name: tuple(tokenizer.encode(sentence)) for name, sentence in frames.items()}
        return cls(dict(frames), spelled, tokenizer.id_of("<|eos|>"))

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
