"""The phases of one run of trace three, one function per group of events (t00–t14).

``labkit.tools.runtime.run_tool_trace`` runs ``PHASES`` in order on one ``RunState``; each
phase records its events and returns None to go on, or the request status the run ends with
(``close_trace`` then records ``trace.closed``).  A page can ``show_source`` one phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.events import TraceRecorder
from labkit.core.runtime import Config
from labkit.tools.answer import ANSWER_STRATEGY
from labkit.tools.authorize import Principal, authorize
from labkit.tools.calendar_service import CalendarService, ServiceTransport
from labkit.tools.calls import ModelCall, first_model_call, model_started_payload, second_model_call
from labkit.tools.confirm import (
    Confirmation,
    ConfirmationError,
    check_confirmation,
    confirmation_card,
    invocation_digest,
)
from labkit.tools.executor import Crash, CrashPlan, Executor
from labkit.tools.hooks import ToolHooks
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation, normalize
from labkit.tools.recovery import recover_invocation
from labkit.tools.states import InvocationMachine, State
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import ToolSpec
from labkit.tools.validate import ProposalError, parse_arguments, validate_arguments

CANCELLED_AFTER_COMMIT = "cancelled-after-commit"  # §7.13's request status
RECOVERY_GUIDANCE = "the event exists; query it by event ID or idempotency key, or delete it with calendar.delete_event"


@dataclass
class ToolTrace:
    """What a run leaves behind: events, the machine, the Invocation(s), the service."""

    config: Config  # labkit.tools.runtime.ToolRunConfig
    events: list[dict]
    machine: InvocationMachine
    first_call: ModelCall | None
    second_call: ModelCall | None = None
    arguments_bytes: bytes = b""
    invocation: Invocation | None = None
    confirmation: Confirmation | None = None
    service: CalendarService | None = None
    journal: Journal | None = None
    executor: Executor | None = None
    request_status: str = ""
    answer: str | None = None

    @property
    def final_state(self) -> str:
        return self.machine.state.value


def _cut_short(raw: bytes, how: str | None) -> bytes:
    """The bytes the parser receives: the decoder's own, or (``not_json``) their first half."""
    return raw[: len(raw) // 2] if how == "not_json" else raw


def _merged(arguments: dict, how: str | None) -> dict:
    """The arguments handed to the validator: the parsed ones, or (``extra_field``) those with a
    ``notify_all`` merged in after parsing — past the grammar, which only shaped the bytes."""
    return {**arguments, "notify_all": True} if how == "extra_field" else arguments


@dataclass
class RunState:
    """What the phases of one run share: the recorder, the pieces, the trace being filled,
    and the values one phase hands to the next."""

    rec: TraceRecorder
    trace: ToolTrace
    spec: ToolSpec
    decoder: object
    hooks: ToolHooks
    artifacts: dict
    raw: bytes = b""
    arguments: dict | None = None
    presented: Invocation | None = None
    result: dict | None = None
    tool_message: dict | None = None

    @property
    def config(self):
        return self.trace.config

    def move(self, state: State) -> None:
        """The Invocation's next state, authorised by the event about to be recorded."""
        self.trace.machine.move(state, self.rec.next_event_id())

    @property
    def state(self) -> str:
        return self.trace.machine.state.value


def propose(run: RunState) -> None:
    """t00–t01, mc_01: prefill the prompt, decode the arguments under the grammar mask."""
    rec, config = run.rec, run.config
    first = first_model_call(run.decoder, run.spec, config.user_text, run.hooks.proposal_mask)
    run.trace.first_call = first
    rec.emit("model runtime", "model.started", 0, model_started_payload(first, run.artifacts))
    generated = first.decode.text.encode("utf-8")
    run.raw = run.trace.arguments_bytes = _cut_short(generated, config.proposal_tamper)
    steps = first.decode.steps
    rec.emit(
        "decoder",
        "proposal.generated",
        len(steps),
        {
            "model_call_id": "mc_01",
            "proposal_id": "p_01",
            "state": run.state,
            "generated_tokens": len(steps),
            "token_ids": list(first.decode.token_ids),
            "allowed_counts": [s.allowed_count for s in steps],
            "forced_steps": sum(s.forced for s in steps),
            "arguments_utf8_hex": generated.hex(),
            "finish_reason": first.decode.finish_reason,
            "final_cache_length": first.cache.length,
        },
    )


def parse(run: RunState) -> str | None:
    """t02: the proposal's bytes parse as one JSON object, or the proposal is rejected."""
    try:
        run.arguments = parse_arguments(run.raw)
    except ProposalError as exc:
        run.move(State.PARSE_REJECTED)
        run.rec.emit(
            "JSON parser",
            "proposal.rejected",
            None,
            {"state": run.state, "received_utf8_hex": run.raw.hex(), "reason": str(exc)},
        )
        return "rejected"
    run.move(State.PARSED)
    run.rec.emit(
        "JSON parser", "proposal.parsed", None, {"proposal_id": "p_01", "state": run.state, "keys": list(run.arguments)}
    )
    return None


def validate(run: RunState) -> str | None:
    """t03: the arguments against the ToolSpec's JSON Schema."""
    run.arguments = _merged(run.arguments, run.config.proposal_tamper)
    report = validate_arguments(run.spec, run.arguments)
    if not report.valid:
        run.move(State.VALIDATION_REJECTED)
        run.rec.emit(
            "validator",
            "schema.rejected",
            None,
            {
                "state": run.state,
                "keys": list(run.arguments),
                "validator": report.validator,
                "format_checker": report.format_checker,
                "errors": [list(e) for e in report.errors],
            },
        )
        return "rejected"
    run.move(State.VALIDATED)
    run.rec.emit(
        "validator",
        "schema.validated",
        None,
        {"state": run.state, "validator": report.validator, "format_checker": report.format_checker, "errors": []},
    )
    return None


def normalise(run: RunState) -> None:
    """t04: the Invocation, in absolute time; from here on the journal records every state."""
    config = run.config
    invocation = normalize(
        run.spec,
        run.arguments,
        invocation_id="inv_01",
        clock=config.clock,
        tz_name=config.timezone,
        subject=config.subject,
    )
    run.trace.invocation = invocation
    run.trace.machine.attach(run.trace.journal, invocation.to_json(), config.retry_budget)
    run.rec.emit(
        "normalizer",
        "invocation.normalized",
        None,
        {
            "state": run.state,
            "invocation_id": invocation.invocation_id,
            "reference_clock": config.clock,
            "timezone": config.timezone,
            "invocation": invocation.to_json(),
        },
    )


def authorise(run: RunState) -> str | None:
    """t05: may this subject do this, on this calendar?"""
    decision = authorize(run.trace.invocation, Principal(run.config.subject, run.config.capabilities))
    auth = {
        "subject": decision.subject,
        "capability": decision.capability,
        "scope": decision.scope,
        "reason": decision.reason,
    }
    if not decision.allowed:
        run.move(State.AUTHORIZATION_DENIED)
        run.rec.emit("authorizer", "authorization.denied", None, {"state": run.state, **auth})
        return "denied"
    run.move(State.AUTHORIZED)
    run.rec.emit("authorizer", "authorization.allowed", None, {"state": run.state, **auth})
    return None


def confirm(run: RunState) -> str | None:
    """t06–t07: the user approves a card bound to the Invocation's digest; the Invocation
    presented for execution must be the one approved."""
    config, invocation, rec = run.config, run.trace.invocation, run.rec
    digest = invocation_digest(invocation)
    run.move(State.PREPARED)
    rec.emit(
        "confirmation",
        "confirmation.requested",
        None,
        {
            "state": run.state,
            "invocation_id": invocation.invocation_id,
            "invocation_digest": digest,
            "card": confirmation_card(invocation, config.timezone).lines(),
        },
    )
    approved = digest if not config.tamper_digest else _flip_last_hex(digest)
    confirmation = run.trace.confirmation = Confirmation("confirm_01", invocation.invocation_id, approved, "approve")
    known, run.presented = {invocation.invocation_id: invocation}, invocation
    if config.edit_after_approval:
        run.presented = invocation.with_arguments("inv_02", **dict(config.edit_after_approval))
        known[run.presented.invocation_id] = run.presented
    try:
        check_confirmation(confirmation, run.presented, known, matches=run.hooks.digest_matches)
    except ConfirmationError as exc:
        run.move(State.CONFIRMATION_REJECTED)
        rec.emit(
            "confirmation",
            "confirmation.rejected",
            None,
            {
                "state": run.state,
                "confirmation_id": confirmation.confirmation_id,
                "decision": confirmation.decision,
                "approved_digest": confirmation.invocation_digest,
                "presented_invocation_id": run.presented.invocation_id,
                "presented_digest": invocation_digest(run.presented),
                "digest_matches": False,
                "reason": str(exc),
            },
        )
        return "needs_new_confirmation"
    rec.emit(
        "confirmation",
        "confirmation.approved",
        None,
        {
            "state": run.state,
            "confirmation_id": confirmation.confirmation_id,
            "decision": confirmation.decision,
            "invocation_digest": confirmation.invocation_digest,
            "digest_matches": True,
        },
    )
    return None


def execute(run: RunState) -> str | None:
    """t08–t09: execute with an idempotency key; the commit boundary is the service's event ID.
    A crash (``config.crash_point``) is followed by a restart that recovers from the journal."""
    config, trace, rec = run.config, run.trace, run.rec
    approved = trace.confirmation.invocation_digest
    trace.journal.update(trace.invocation.invocation_id, approved_digest=approved)
    transport = ServiceTransport(trace.service, config.transport_plan, config.query_plan)
    crash = CrashPlan(config.crash_point, config.crash_attempt) if config.crash_point else None
    trace.executor = Executor(
        transport,
        config.request_id,
        config.retry_budget,
        config.new_key_per_attempt,
        crash,
        emit=rec.emit,
        next_event_id=rec.next_event_id,
    )
    try:
        run.result = trace.executor.execute(trace.machine, run.presented, approved)
    except ConfirmationError as exc:  # the executor's own guard: nothing was sent
        run.move(State.CONFIRMATION_REJECTED)
        rec.emit(
            "executor",
            "execution.refused",
            None,
            {
                "state": run.state,
                "invocation_id": run.presented.invocation_id,
                "approved_digest": approved,
                "presented_digest": invocation_digest(run.presented),
                "reason": str(exc),
                "side_effect": False,
            },
        )
        return "needs_new_confirmation"
    except Crash as crashed:
        recover(run, transport, crashed)
    if run.result is None:
        return "failed" if trace.machine.state is State.FAILED else "outcome_unknown"
    return None


def recover(run: RunState, transport: ServiceTransport, crashed: Crash) -> None:
    """The runtime died mid-execution: a restarted one resolves the Invocation from the journal."""
    config, trace, rec = run.config, run.trace, run.rec
    invocation_id = trace.invocation.invocation_id
    rec.emit(
        "runtime",
        "runtime.crashed",
        None,
        {"journal_state": trace.journal.entry(invocation_id).state, "reason": str(crashed)},
    )
    trace.executor = Executor(
        transport,
        config.request_id,
        config.retry_budget,
        config.new_key_per_attempt,
        emit=rec.emit,
        next_event_id=rec.next_event_id,
    )
    rec.emit(
        "runtime",
        "runtime.recovered",
        None,
        {
            "journal_state": trace.journal.entry(invocation_id).state,
            "journal_transitions": len(trace.journal.transitions(invocation_id)),
        },
    )
    trace.machine, run.result = recover_invocation(trace.journal, trace.executor, invocation_id)


def cancel_after_commit(run: RunState) -> str | None:
    """A cancel that arrives after the commit: the event exists, the summary is skipped."""
    if not run.config.cancel_after_commit:
        return None
    run.rec.emit(
        "runtime",
        "request.cancelled",
        None,
        {
            "state": run.state,
            "side_effect": True,
            "second_model_call": "skipped",
            "commit": {"status": run.result["status"], "event_id": run.result["event_id"]},
            "guidance": RECOVERY_GUIDANCE,
        },
    )
    return CANCELLED_AFTER_COMMIT


def observe(run: RunState) -> None:
    """t10: the service's result becomes a tool message."""
    result = run.result
    tool_message = {
        "tool_call_id": "p_01",
        "status": result["status"],
        "event_id": result["event_id"],
        "start": result["start"],
    }
    run.move(State.OBSERVED)
    run.rec.emit(
        "runtime", "result.encoded", None, {"state": run.state, "side_effect": True, "tool_message": tool_message}
    )
    run.tool_message = tool_message


def answer(run: RunState) -> None:
    """t11–t13, mc_02: sees the tool result (reusing mc_01's prefix cache), then answers."""
    rec, result = run.rec, run.result
    second = run.trace.second_call = second_model_call(
        run.decoder, run.spec, run.config.user_text, run.trace.first_call, run.tool_message, run.hooks.reusable_prefix
    )
    rec.emit(
        "model runtime",
        "model.started",
        0,
        {
            **model_started_payload(second, {**run.artifacts, "sampler": ANSWER_STRATEGY}),
            "tool_call_id": "p_01",
            "tool_result_status": result["status"],
            "tool_result_event_id": result["event_id"],
        },
    )
    decoded = second.decode
    rec.emit(
        "transport",
        "text.delta",
        len(decoded.steps),
        {
            "model_call_id": "mc_02",
            "deltas": [s.piece for s in decoded.steps if s.chosen_id != ToolTokenizer().id_of("<|eos|>")],
            "token_ids": list(decoded.token_ids),
            "utf8_hex": decoded.text.encode("utf-8").hex(),
        },
    )
    rec.emit(
        "runtime",
        "response.completed",
        None,
        {
            "model_call_id": "mc_02",
            "finish_reason": decoded.finish_reason,
            "text": decoded.text,
            "output_tokens": len(decoded.token_ids),
            "final_cache_length": second.cache.length,
        },
    )
    run.trace.answer = decoded.text


def close_trace(run: RunState, status: str, answer: str | None = None) -> ToolTrace:
    """The last event: the request status, the calendar's state and the Invocation's history."""
    trace, service = run.trace, run.trace.service
    trace.request_status = status
    run.rec.emit(
        "tracing",
        "trace.closed",
        None,
        {
            "state": run.state,
            "request_status": status,
            "external_commit": bool(service.store),
            "commit": {
                "calendar_events": sorted(service.store),
                "events_for_key": service.events_with_key(f"{run.config.request_id}:create-event:1"),
                "executions": service.executions,
            },
            "state_history": [f"{a}→{b}" for a, b, _ in trace.machine.history],
        },
    )
    trace.answer = answer
    return trace


#: the phases of a run, in event order (``run_tool_trace`` runs them until one ends the request)
PHASES = (propose, parse, validate, normalise, authorise, confirm, execute, cancel_after_commit, observe, answer)


def _flip_last_hex(digest: str) -> str:
    last = digest[-1]
    return digest[:-1] + ("0" if last != "0" else "1")
