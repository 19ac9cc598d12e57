"""Trace three's text: toy-tool-tokenizer-v1 (``ToolTokenizer``) and toy-tool-template-v1 (``ToolTemplate``).

The tokenizer's 256 pieces: the control tokens, never produced by ordinary text; every printable ASCII
character, so any JSON document the grammar allows can be spelled; ``PIECES``; reserved control tokens.
Encoding is greedy, longest match first.

The template renders one block per message; for a tool call the runtime opens the call and the model
writes only the arguments.  A longer conversation's render starts with the exact tokens of the shorter
one, which lets the second model call reuse the first call's prefix cache (§7.14).
"""

import json
from functools import lru_cache

from labkit.core.guards import token_ids
from labkit.tools.toolspec import ToolSpec

TOKENIZER_ID = "toy-tool-tokenizer-v1"
VOCAB_SIZE = 256

CONTROL = (
    *("<|pad|>", "<|bos|>", "<|eos|>", "<|system|>", "<|tools|>", "<|user|>", "<|assistant|>", "<|tool_result|>"),
    *("<|end|>", "<|tool_call|>", "<|call_end|>"),
)
ASCII = tuple(chr(c) for c in range(0x20, 0x7F))
PROPOSAL_ID = "p_01"  # mc_01's one proposal, which the tool message answers (one vocabulary piece)

#: multi-character pieces, grouped by where they occur
PIECES = (
    # the tool call's JSON: keys, separators, and the value pieces the proposal uses
    *('{"', '":"', '","', '":', "calendar_id", "title", "local_date", "local_time", "duration_minutes", "primary"),
    *("2026", "-07", "-20", ":00", "10", "20"),
    # the tool result's JSON
    *('{"tool_call_id":"', '","status":"', '","event_id":"', '","start":"', '"}', PROPOSAL_ID, "ok", "evt_6K2"),
    *(":00:00", "+08:00"),
    # the tool signature rendered from the ToolSpec
    *("calendar.create_event@v1", "write", "string", "date", "pattern", "integer", "required", "additional"),
    *("none", "; ", ".."),
    # the system instruction
    *("Call", " the", " tool", " below", " with", " JSON", " arguments", " only", " runtime", " asks", " user"),
    *(" to", " confirm"),
    # the user message and the summary (Chinese)
    *("明天", "上午", "九点", "提醒", "我", "带", "护照", "，", "提交", "前", "让", "确认", "。"),
    *("已在", " 年 ", " 月 ", " 日", " 创建", "“", "”", "创建", "没有", "：", "日历", "未"),
    *("暂时", "无法", "请", "稍后", "再试", "下午"),
)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[str, ...]:
    """All 256 pieces in ID order (reserved control tokens fill the tail; the tests hold them distinct)."""
    pieces = (*CONTROL, *ASCII, *PIECES)
    return pieces + tuple(f"<|reserved_{k}|>" for k in range(VOCAB_SIZE - len(pieces)))


class ToolTokenizer:
    """Greedy longest-match tokenizer over ``vocabulary()``; control tokens by exact name."""

    tokenizer_id, vocab_size = TOKENIZER_ID, VOCAB_SIZE

    @property
    def pieces(self) -> tuple[str, ...]:
        return vocabulary()

    def id_of(self, piece: str) -> int:
        table = _index()
        if piece not in table:
            raise ValueError(f"{piece!r} is not a piece of {TOKENIZER_ID}")
        return table[piece]

    def is_control(self, token_id: int) -> bool:
        return self.pieces[token_id].startswith("<|")

    def encode(self, text: str) -> list[int]:
        """Text (control tokens written as ``<|name|>``) → token IDs, longest match first."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        table, ids, i = _index(), [], 0
        longest = max(map(len, table))
        while i < len(text):
            for size in range(min(longest, len(text) - i), 0, -1):
                piece = text[i : i + size]
                if piece in table and (not piece.startswith("<|") or piece in CONTROL):
                    ids.append(table[piece])
                    i += size
                    break
            else:
                raise ValueError(f"{TOKENIZER_ID} has no piece for {text[i]!r} (U+{ord(text[i]):04X}) at position {i}")
        return ids

    def decode(self, ids) -> str:
        """Token IDs → text; control tokens come back as their ``<|name|>``."""
        return "".join(self.pieces[token] for token in token_ids("ids", ids, self.vocab_size))


@lru_cache(maxsize=1)
def _index() -> dict[str, int]:
    return {piece: i for i, piece in enumerate(vocabulary())}


TEMPLATE_ID = "toy-tool-template-v1"

SYSTEM_INSTRUCTION = "Call the tool below with JSON arguments only: the runtime asks the user to confirm."


def render_signature(spec: ToolSpec) -> str:
    """One line per tool: ``ref side_effect: name:kind; …; required:…; additional:none``."""
    parts = []
    for name, prop in spec.input_schema.get("properties", {}).items():
        if "enum" in prop:
            kind = "|".join(str(v) for v in prop["enum"])
        elif "format" in prop:
            kind = prop["format"]
        elif "pattern" in prop:
            kind = "pattern"
        else:
            kind = prop.get("type", "any")
        low = prop.get("minLength", prop.get("minimum"))
        high = prop.get("maxLength", prop.get("maximum"))
        if low is not None or high is not None:
            kind += f"[{'' if low is None else low}..{'' if high is None else high}]"
        parts.append(f"{name}:{kind}")
    required = spec.input_schema.get("required", [])
    all_required = list(required) == list(spec.input_schema.get("properties", {}))
    parts.append("required:" + ("*" if all_required else ",".join(required)))
    if spec.input_schema.get("additionalProperties") is False:
        parts.append("additional:none")
    return f"{spec.ref} {spec.side_effect_class}: " + "; ".join(parts)


def compact_json(value) -> str:
    """The JSON spelling the model reads and writes: no spaces, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ToolTemplate:
    """Renders the first call's prompt and the second call's re-rendered conversation."""

    template_id = TEMPLATE_ID

    def tool_call_prompt(self, specs: list[ToolSpec], user_text: str) -> str:
        """mc_01's input: the system instruction, one signature per tool, the user message, the opened call."""
        if not specs:
            raise ValueError("specs must offer at least one ToolSpec, got none")
        signatures = "\n".join(render_signature(s) for s in specs)
        return (
            f"<|bos|><|system|>{SYSTEM_INSTRUCTION}<|end|><|tools|>{signatures}<|end|><|user|>{user_text}<|end|>"
            "<|assistant|><|tool_call|>"
        )

    def after_tool_result(self, specs: list[ToolSpec], user_text: str, arguments_text: str, tool_message: dict) -> str:
        """mc_02's input: mc_01's input, the proposal, the tool message, the answer prompt."""
        return (
            self.tool_call_prompt(specs, user_text)
            + f"{arguments_text}<|call_end|>"
            + f"<|tool_result|>{compact_json(tool_message)}<|end|><|assistant|>"
        )
