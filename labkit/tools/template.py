"""toy-tool-template-v1: how messages, the ToolSpec and tool results become model input.

A conversation is rendered as ``<|bos|>`` and then one block per message::

    <|system|>{instruction}<|end|>
    <|tools|>{signature of every offered ToolSpec}<|end|>
    <|user|>{text}<|end|>
    <|assistant|><|tool_call|>{arguments JSON}<|call_end|>      (a proposal)
    <|tool_result|>{tool message JSON}<|end|>
    <|assistant|>                                             (generation prompt)

For a tool call the generation prompt is ``<|assistant|><|tool_call|>``: the runtime opens
the call and the model writes only the arguments.  Every render of a longer conversation
starts with the exact tokens of the shorter one, which is what lets the second model call
reuse the first call's prefix cache (§7.14).
"""

from __future__ import annotations

import json

from labkit.tools.toolspec import ToolSpec

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

    def head(self, specs: list[ToolSpec], user_text: str) -> str:
        if not specs:
            raise ValueError("specs must offer at least one ToolSpec, got none")
        signatures = "\n".join(render_signature(s) for s in specs)
        return f"<|bos|><|system|>{SYSTEM_INSTRUCTION}<|end|><|tools|>{signatures}<|end|><|user|>{user_text}<|end|>"

    def tool_call_prompt(self, specs: list[ToolSpec], user_text: str) -> str:
        """mc_01's input: the conversation so far and the opened tool call."""
        return self.head(specs, user_text) + "<|assistant|><|tool_call|>"

    def after_tool_result(self, specs: list[ToolSpec], user_text: str, arguments_text: str, tool_message: dict) -> str:
        """mc_02's input: mc_01's input, the proposal, the tool message, the answer prompt."""
        return (
            self.tool_call_prompt(specs, user_text)
            + f"{arguments_text}<|call_end|>"
            + f"<|tool_result|>{compact_json(tool_message)}<|end|><|assistant|>"
        )
