"""Recipe for trace three's fixtures: the §7.10 ToolSpec, the tokenizer's pieces, the toy-tool-decoder-v1
weights, fitted so that the real decode writes the §7.11 arguments and each summary of ``SUMMARY_CASES``
(refused otherwise), and the golden traces.  The targets are the chapter's; the runtime computes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from booktools.fixture_files import save_arrays
from labkit.core.events import write_jsonl
from labkit.core.fixtures import write_json
from labkit.nn import Decoder, DecoderWeights
from labkit.tools.answer import AnswerSlots, frame_sentences
from labkit.tools.calls import grammar_for, proposal_mask, second_model_call
from labkit.tools.config import USER_TEXT
from labkit.tools.faults import SCENARIOS, faulty_config
from labkit.tools.fixture import TARGET_ARGUMENTS, golden_file
from labkit.tools.model import CONFIG, WEIGHTS_FILE
from labkit.tools.runtime import ToolRunConfig, run_tool_trace
from labkit.tools.tokenizer import PROPOSAL_ID, TOKENIZER_ID, ToolTemplate, ToolTokenizer, compact_json, vocabulary
from labkit.tools.toolspec import DRAFT_2020_12, check_toolspec

#: §7.13/§7.14: the tool message the second call reads, and its answer
TARGET_TOOL_MESSAGE = {
    "tool_call_id": PROPOSAL_ID,
    "status": "ok",
    "event_id": "evt_6K2",
    "start": "2026-07-20T09:00:00+08:00",
}
TARGET_SUMMARY = "已在 2026 年 7 月 20 日上午 9:00 创建“带护照”提醒。"


def _string(**constraints) -> dict:
    return {"type": "string", **constraints}


def build_calendar_toolspec() -> dict:
    """calendar.create_event@v1 with the five required arguments, in §7.10's key order."""
    properties = {
        "calendar_id": _string(enum=["primary"]),
        "title": _string(minLength=1, maxLength=80),
        "local_date": _string(format="date"),
        "local_time": _string(pattern="^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"),
        "duration_minutes": {"type": "integer", "minimum": 1, "maximum": 24 * 60},
    }
    schema = {"$schema": DRAFT_2020_12, "type": "object", "properties": properties}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False
    return {"name": "calendar.create_event", "version": "v1", "side_effect_class": "write", "input_schema": schema}


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


#: toy-tool-decoder-v1's fit (``labkit.tools.model`` says what it solves)
SEED = 20260719
MARGIN = 1.0


def initial_weights(seed: int = SEED) -> DecoderWeights:
    """Seeded normal weights; the output head starts as zeros (it is fitted)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in CONFIG.weight_shapes().items():
        if name == "embedding":
            arrays[name] = rng.normal(0.0, 1.0, shape)
        elif name == "output":
            arrays[name] = np.zeros(shape)
        else:
            arrays[name] = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
    return DecoderWeights.from_arrays({k: v.astype(np.float32) for k, v in arrays.items()}, CONFIG)


def final_hidden(weights: DecoderWeights, input_ids: np.ndarray) -> np.ndarray:
    """z = RMSNorm(x_L) at every position: [T, d] (read through an identity output head)."""
    probe = DecoderWeights(weights.embedding, np.eye(CONFIG.width, CONFIG.vocab_size, dtype=np.float32), weights.layers)
    logits = Decoder(CONFIG, probe).full_logits(np.asarray(input_ids).reshape(1, -1))
    return logits[0, :, : CONFIG.width].astype(np.float64)


def fit_output_head(
    states: np.ndarray, targets: np.ndarray, allowed: np.ndarray, margin: float = MARGIN, max_epochs: int = 5000
) -> np.ndarray:
    """W_out [d, V] with z_s·(w_{y_s} − w_j) ≥ margin for every allowed competitor j; states [S, d],
    targets [S], allowed [S, V] (boolean).  Raises if not separated within ``max_epochs``."""
    states = np.round(np.asarray(states, dtype=np.float64), 4)  # insensitive to last-bit BLAS noise
    n_states, width = states.shape
    w = np.zeros((width, allowed.shape[1]))
    rows = np.arange(n_states)
    for _ in range(max_epochs):
        logits = states @ w
        gap = logits[rows, targets][:, None] - logits  # [S, V]
        violated = allowed & (gap < margin)
        violated[rows, targets] = False
        if not violated.any():
            return w
        for s in np.flatnonzero(violated.any(axis=1)):
            competitors = np.flatnonzero(violated[s])
            w[:, targets[s]] += states[s] * len(competitors) / n_states
            w[:, competitors] -= states[s][:, None] / n_states
    worst = int(np.argmax(violated.sum(axis=1)))
    raise ValueError(f"output head did not separate decision state {worst} within {max_epochs} epochs")


def decision_states(weights: DecoderWeights, sequences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Teacher-forced states [S, d], targets [S], allowed [S, V] of (prompt IDs, target IDs, allowed masks)
    sequences: target t_k's state is the final hidden before it (W_out does not change it)."""
    states, targets, allowed = [], [], []
    for prompt, target, masks in sequences:
        ids = list(prompt) + list(target[:-1])
        hidden = final_hidden(weights, np.array(ids))
        states.append(hidden[len(prompt) - 1 :])
        targets += list(target)
        allowed += list(masks)
    return np.vstack(states), np.array(targets), np.array(allowed, dtype=bool)


def fit_weights(sequences, seed: int = SEED) -> DecoderWeights:
    """Seeded weights with the output head fitted to the decision states of ``sequences``."""
    weights = initial_weights(seed)
    states, targets, allowed = decision_states(weights, sequences)
    head = fit_output_head(states, targets, allowed).astype(np.float32)
    return DecoderWeights(weights.embedding, head, weights.layers)


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
