"""Trace three as a kind: this module's names are the fields of its ``labkit.core.kinds.TraceKind``
(``TraceKind.declared_by``); ``labkit.trace.kinds`` declares it and imports it on first use.

Built on the tools package's public names (``run_tool_trace``, ``FAULTS``, ``HAPPY``, the
fixture recipe); ``labkit trace tool torture`` is a command of its own (``labkit.cli``)."""

from __future__ import annotations

from labkit.core import faults as S
from labkit.core.kinds import TraceContract
from labkit.tools.clauses import CLAUSES as clauses
from labkit.tools.faults import FAULTS as faults
from labkit.tools.faults import HAPPY
from labkit.tools.fixture import build as build_fixture
from labkit.tools.run_state import ToolHooks as hooks
from labkit.tools.runtime import ToolRunConfig as config
from labkit.tools.runtime import ToolTrace
from labkit.tools.runtime import run_tool_trace as run

help = "trace three: a confirmed, idempotent calendar tool call"
fixture = "tools"
baseline = ("happy", HAPPY)
contract = TraceContract(
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
        ("proposal.generated", "discrete_state"): S.PROPOSAL_DECODING,
        ("proposal.generated", "tensors"): S.MODEL_PATH,
        # the same bytes at t01 parse to other arguments at t02: they were changed past the grammar
        ("proposal.parsed", "discrete_state"): S.ARGUMENTS_PAST_GRAMMAR,
        ("schema.validated", "discrete_state"): S.SCHEMA_VALIDATION,
        ("invocation.normalized", "discrete_state"): S.NORMALISER,
        ("authorization.allowed", "discrete_state"): S.AUTHORISATION,
        ("confirmation.requested", "discrete_state"): S.CONFIRMATION_BINDING,
        ("confirmation.approved", "discrete_state"): S.CONFIRMATION_BINDING,
        ("*", "external_commit"): S.COMMIT_BOUNDARY,
        ("*", "artifact_ids"): S.TOOL_ARTIFACTS,
    },
    component_suspects={
        "executor": S.COMMIT_BOUNDARY,
        "validator": S.SCHEMA_VALIDATION,
        "confirmation": S.CONFIRMATION_BINDING,
        "authorizer": S.AUTHORISATION,
        "calendar service": S.EXTERNAL_SERVICE,
        "runtime": S.REQUEST_LIFECYCLE,
        "decoder": S.PROPOSAL_DECODING,
    },
    decision_events=("proposal.generated",),
    branch_suspects={
        "schema.rejected": S.ARGUMENTS_PAST_GRAMMAR,
        "proposal.rejected": S.PROPOSAL_BYTES_CUT,
        "runtime.crashed": S.RUNTIME_CRASH,
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
