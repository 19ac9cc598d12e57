"""Trace one as a kind: this module's names are the fields of its ``labkit.core.kinds.TraceKind``
(``TraceKind.declared_by``); ``labkit.trace.kinds`` declares it and imports it on first use."""

from __future__ import annotations

from labkit.core import faults as S
from labkit.core.kinds import TraceContract
from labkit.text.clauses import CLAUSES as clauses
from labkit.text.config import TextHooks as hooks
from labkit.text.config import TextRun
from labkit.text.config import TextTraceConfig as config
from labkit.text.faults import FAULTS as faults
from labkit.text.fixture import build as build_fixture
from labkit.text.runtime import run_text_trace as run

help = "trace one: 天空为什么是蓝色？ from template to EOS"
fixture = "text"
contract = TraceContract(
    kind="text",
    event_prefix="e",
    initial_object="12 prompt token IDs",
    model_state="residual stream, per-layer KV cache, next-token logits",
    runtime_update="ordered logits processors, greedy selection, stop check",
    irreversible_point="bytes already streamed are usually not taken back",
    random_entry="none: this fixture decodes greedily",
    termination="EOS selected (or max_output_tokens)",
    replay_core="token IDs and the event sequence",
    output_means="incremental text",
    suspects={
        ("input.tokenized", "discrete_state"): S.TEMPLATE_OR_TOKENIZER,
        ("context.rendered", "discrete_state"): S.TEMPLATE,
        ("prefill.completed", "tensors"): S.MODEL_PATH,
        ("decode.completed", "tensors"): S.MODEL_PATH,
        ("decode.started", "discrete_state"): S.DECODE_SCHEDULING,
        ("decode.completed", "discrete_state"): S.KV_CACHE_BOOKKEEPING,
        ("token.selected", "tensors"): S.MODEL_PATH,
        ("token.selected", "discrete_state"): S.PROCESSORS,
        ("stream.delta", "discrete_state"): S.DETOKENIZER,
        ("generation.draining", "discrete_state"): S.STOP_CONDITIONS,
        ("request.accepted", "discrete_state"): S.STOP_CONDITIONS,
        ("*", "artifact_ids"): S.TEXT_ARTIFACTS,
    },
    component_suspects={"transport": S.DETOKENIZER, "decoder": S.PROCESSORS, "model": S.MODEL_PATH},
    decision_events=("token.selected",),
    branch_suspects={"client.disconnected": S.CLIENT_DISCONNECT, "stop.matched": S.STOP_CONDITIONS},
)


def summary(result: TextRun, fault: str | None) -> list[str]:
    """What ``labkit trace text`` prints of a run."""
    events = result.events
    return [
        f"trace {result.config.trace_id}: {len(events)} events ({events[0]['event_id']}–{events[-1]['event_id']})"
        + (f", fault {fault}" if fault else ""),
        f"selected   {result.selected}",
        f"returned   {result.text!r} ({len(result.returned_bytes)} bytes)",
        f"finish     {result.finish_reason}; final cache length {result.cache_final_length}",
    ]
