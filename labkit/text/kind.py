"""Trace one as a kind: ``TEXT``, one ``labkit.core.kinds.TraceKind`` (one line of ``labkit.trace.kinds``'s table)."""

from labkit.core import faults as suspects
from labkit.core.kinds import TraceContract, TraceKind
from labkit.text.clauses import CLAUSES
from labkit.text.config import TextHooks, TextRun, TextTraceConfig
from labkit.text.faults import FAULTS
from labkit.text.runtime import run_text_trace

CONTRACT = TraceContract(
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
        ("input.tokenized", "discrete_state"): suspects.TEMPLATE_OR_TOKENIZER,
        ("context.rendered", "discrete_state"): suspects.TEMPLATE,
        ("prefill.completed", "tensors"): suspects.MODEL_PATH,
        ("decode.completed", "tensors"): suspects.MODEL_PATH,
        ("decode.started", "discrete_state"): suspects.DECODE_SCHEDULING,
        ("decode.completed", "discrete_state"): suspects.KV_CACHE_BOOKKEEPING,
        ("token.selected", "tensors"): suspects.MODEL_PATH,
        ("token.selected", "discrete_state"): suspects.PROCESSORS,
        ("stream.delta", "discrete_state"): suspects.DETOKENIZER,
        ("generation.draining", "discrete_state"): suspects.STOP_CONDITIONS,
        ("request.accepted", "discrete_state"): suspects.STOP_CONDITIONS,
        ("*", "artifact_ids"): suspects.TEXT_ARTIFACTS,
    },
    component_suspects={
        "transport": suspects.DETOKENIZER,
        "decoder": suspects.PROCESSORS,
        "model": suspects.MODEL_PATH,
    },
    decision_events=("token.selected",),
    branch_suspects={"client.disconnected": suspects.CLIENT_DISCONNECT, "stop.matched": suspects.STOP_CONDITIONS},
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


TEXT = TraceKind(
    name="text",
    help="trace one: 天空为什么是蓝色？ from template to EOS",
    config=TextTraceConfig,
    hooks=TextHooks,
    run=run_text_trace,
    contract=CONTRACT,
    faults=FAULTS,
    fixture="text",
    summary=summary,
    clauses=CLAUSES,
)
