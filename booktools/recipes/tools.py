"""Recipe for trace three's fixtures: the §7.10 ToolSpec, the tokenizer's pieces, the toy-tool-decoder-v1
weights, fitted so that the real decode writes the §7.11 arguments and each summary of ``SUMMARY_CASES``
(refused otherwise), and the golden traces.  The targets are the chapter's; the runtime computes.
"""

from __future__ import annotations

from pathlib import Path

from booktools.recipes.files import save_arrays
from labkit.core.events import write_jsonl
from labkit.core.fixtures import write_json
from labkit.nn import Decoder
from labkit.tools.answer import AnswerSlots, frame_sentences
from labkit.tools.calls import grammar_for, proposal_mask, second_model_call
from labkit.tools.config import USER_TEXT
from labkit.tools.faults import SCENARIOS, faulty_config
from labkit.tools.fixture import TARGET_ARGUMENTS, golden_file
from labkit.tools.model import CONFIG, WEIGHTS_FILE, fit_weights
from labkit.tools.runtime import ToolRunConfig, run_tool_trace
from labkit.tools.tokenizer import PROPOSAL_ID, TOKENIZER_ID, ToolTemplate, ToolTokenizer, compact_json, vocabulary
from labkit.tools.toolspec import build_calendar_toolspec, check_toolspec

#: §7.13/§7.14: the tool message the second call reads, and its answer
TARGET_TOOL_MESSAGE = {
    "tool_call_id": PROPOSAL_ID,
    "status": "ok",
    "event_id": "evt_6K2",
    "start": "2026-07-20T09:00:00+08:00",
}
TARGET_SUMMARY = "已在 2026 年 7 月 20 日上午 9:00 创建“带护照”提醒。"


def _ok(event_id: str, start: str) -> dict:
    return {"tool_call_id": PROPOSAL_ID, "status": "ok", "event_id": event_id, "start": start}


#: (tool message, the summary mc_02 must write for it): the head is fitted on all of them at
#: once, so one set of weights must read each result through the forward pass
SUMMARY_CASES = (
    (TARGET_TOOL_MESSAGE, TARGET_SUMMARY),
    (_ok("evt_6K3", "2026-07-20T09:00:00+08:00"), TARGET_SUMMARY),
    (_ok("evt_6K2", "2026-07-20T10:00:00+08:00"), "已在 2026 年 7 月 20 日上午 10:00 创建“带护照”提醒。"),
    (_ok("evt_6K4", "2026-07-21T08:30:00+08:00"), "已在 2026 年 7 月 21 日上午 8:30 创建“带护照”提醒。"),
    (_ok("evt_6K5", "2026-07-20T14:30:00+08:00"), "已在 2026 年 7 月 20 日下午 2:30 创建“带护照”提醒。"),
    (_ok("evt_7A1", "2026-07-25T07:15:00+08:00"), "已在 2026 年 7 月 25 日上午 7:15 创建“带护照”提醒。"),
    (_ok("evt_7B2", "2026-12-31T21:45:00+08:00"), "已在 2026 年 12 月 31 日下午 9:45 创建“带护照”提醒。"),
    (_ok("evt_6K2", "2026-07-20T18:00:00+08:00"), "已在 2026 年 7 月 20 日下午 6:00 创建“带护照”提醒。"),
    ({"tool_call_id": PROPOSAL_ID, "status": "not_committed"}, "没有创建“带护照”提醒：日历未提交。"),
    ({"tool_call_id": PROPOSAL_ID, "status": "unavailable"}, "暂时无法创建“带护照”提醒，请稍后再试。"),
)


def fitting_sequences(spec):
    """(prompt IDs, target IDs, allowed masks) of mc_01's proposal and mc_02's answer to each ``SUMMARY_CASES``."""
    tok, template = ToolTokenizer(), ToolTemplate()
    mask_for, arguments_text = proposal_mask(grammar_for(spec)), compact_json(TARGET_ARGUMENTS)
    proposal = tok.encode(arguments_text) + [tok.id_of("<|call_end|>")]
    masks = [mask_for(tok.decode(proposal[:k])) for k in range(len(proposal))]
    first_prompt = tok.encode(template.tool_call_prompt([spec], USER_TEXT))
    sequences, eos = [(first_prompt, proposal, masks)], tok.id_of("<|eos|>")
    for message, summary in SUMMARY_CASES:
        prompt = tok.encode(template.after_tool_result([spec], USER_TEXT, arguments_text, message))
        # the chapter's three kinds compete, the created one too: the head must read the status
        # itself (the runtime's mask then allows only the kind the result's fields allow)
        frames = frame_sentences(TARGET_ARGUMENTS["title"], message.get("start", TARGET_TOOL_MESSAGE["start"]))
        frames.pop("unclear")
        slots = AnswerSlots.of(frames, tok)
        answer = tok.encode(summary) + [eos]
        texts = [tok.decode(answer[:k]) for k in range(len(answer))]
        sequences.append((prompt, answer, [slots.mask(text, tok.pieces) for text in texts]))
    return sequences


def build(dest: Path) -> list[str]:
    """Write trace three's fixtures under ``dest``; return their paths relative to ``dest``."""
    dest = Path(dest)
    spec = check_toolspec(build_calendar_toolspec())
    write_json(dest / "tools" / "toolspec.json", spec.to_json())
    write_json(dest / "tools" / "tokenizer.json", {"tokenizer_id": TOKENIZER_ID, "pieces": list(vocabulary())})
    weights = fit_weights(fitting_sequences(spec))
    save_arrays(dest / "tools" / WEIGHTS_FILE, weights.to_arrays())
    written = ["tools/toolspec.json", "tools/tokenizer.json", f"tools/{WEIGHTS_FILE}"]

    decoder = Decoder(CONFIG, weights)
    happy = run_tool_trace(ToolRunConfig(), decoder=decoder, spec=spec)
    if compact_json(TARGET_ARGUMENTS).encode() != happy.arguments_bytes or happy.answer != TARGET_SUMMARY:
        raise RuntimeError("fitted weights do not reproduce the §7.11 arguments and the §7.14 summary")
    for message, summary in SUMMARY_CASES:
        answer = second_model_call(decoder, spec, happy.config.user_text, happy.first_call, message).decode.text
        if answer != summary:
            raise RuntimeError(f"fitted weights write {answer!r} for {message}, expected {summary!r}")
    for name in SCENARIOS:
        trace = happy if name == "happy" else run_tool_trace(faulty_config(name), decoder=decoder, spec=spec)
        rel = f"traces/{golden_file(name)}"
        write_jsonl(trace.events, dest / rel)
        written.append(rel)
    return written
