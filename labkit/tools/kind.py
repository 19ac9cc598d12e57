"""Trace three as a kind: ``TOOL``, one ``labkit.core.kinds.TraceKind`` (one line of ``labkit.trace.kinds``'s
table).  Built on the tools package's public names (``run_tool_trace``, ``FAULTS``, ``HAPPY``); the crash
and race harness is the book's (``python -m harness``)."""

from labkit.core import faults as suspects
from labkit.core.kinds import TraceContract, TraceKind
from labkit.tools.clauses import CLAUSES
from labkit.tools.config import ToolHooks, ToolRunConfig, ToolTrace
from labkit.tools.faults import FAULTS, HAPPY
from labkit.tools.runtime import run_tool_trace

CONTRACT = TraceContract(
    kind="tool",
    event_prefix="t",
    initial_object="messages + ToolSpec + subject",
    model_state="each of the two model calls has its own cache and logits",
    runtime_update="parse, validate, authorize, execute",
    irreversible_point="the external commit (t09)",
    random_entry="none in decoding; the external service creates the event ID",
    termination="second model call reaches EOS after the tool result is observed",
    replay_core="the Invocation, the idempotency key and the commit status",
    output_means="natural language written after an external result",
    suspects={
        ("proposal.generated", "discrete_state"): suspects.PROPOSAL_DECODING,
        ("proposal.generated", "tensors"): suspects.MODEL_PATH,
        # the same bytes at t01 parse to other arguments at t02: they were changed past the grammar
        ("proposal.parsed", "discrete_state"): suspects.ARGUMENTS_PAST_GRAMMAR,
        ("schema.validated", "discrete_state"): suspects.SCHEMA_VALIDATION,
        ("invocation.normalized", "discrete_state"): suspects.NORMALISER,
        ("authorization.allowed", "discrete_state"): suspects.AUTHORISATION,
        ("confirmation.requested", "discrete_state"): suspects.CONFIRMATION_BINDING,
        ("confirmation.approved", "discrete_state"): suspects.CONFIRMATION_BINDING,
        ("*", "external_commit"): suspects.COMMIT_BOUNDARY,
        ("*", "artifact_ids"): suspects.TOOL_ARTIFACTS,
    },
    component_suspects={
        "executor": suspects.COMMIT_BOUNDARY,
        "validator": suspects.SCHEMA_VALIDATION,
        "confirmation": suspects.CONFIRMATION_BINDING,
        "authorizer": suspects.AUTHORISATION,
        "calendar service": suspects.EXTERNAL_SERVICE,
        "runtime": suspects.REQUEST_LIFECYCLE,
        "decoder": suspects.PROPOSAL_DECODING,
    },
    decision_events=("proposal.generated",),
    branch_suspects={
        "schema.rejected": suspects.ARGUMENTS_PAST_GRAMMAR,
        "proposal.rejected": suspects.PROPOSAL_BYTES_CUT,
        "runtime.crashed": suspects.RUNTIME_CRASH,
    },
)


def summary(trace: ToolTrace, fault: str | None) -> list[str]:
    """What ``labkit trace tool`` prints of a run."""
    events, history = trace.events, trace.machine.history
    lines = [
        f"trace {trace.config.trace_id}: scenario {fault or 'happy'}, {len(events)} events "
        f"({events[0]['event_id']}–{events[-1]['event_id']})",
        f"proposal   {trace.arguments_bytes.decode('utf-8', 'replace')} "
        f"({len(trace.first_call.decode.token_ids)} tokens)",
        f"state      {' → '.join([history[0][0]] + [b for _, b, _ in history])}",
        f"calendar   {sorted(trace.service.store) or 'no event'}; request {trace.request_status}",
    ]
    if trace.answer is not None:
        lines.append(f"answer     {trace.answer}")
    return lines


TOOL = TraceKind(
    name="tool",
    help="trace three: a confirmed, idempotent calendar tool call",
    config=ToolRunConfig,
    hooks=ToolHooks,
    run=run_tool_trace,
    contract=CONTRACT,
    faults=FAULTS,
    fixture="tools",
    summary=summary,
    baseline=("happy", HAPPY),
    clauses=CLAUSES,
)
