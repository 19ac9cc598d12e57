"""The phases of one run of trace three, one function per group of events (t00–t14), in ``PHASES``:
the proposal up to the confirmation (t00–t07), then the execution with an idempotency key (and the
recovery after a crash), the late cancellation, the observation and the second model call.  Each records
its events and returns None to go on, or the request status the run ends with (``close_trace``: t14).
"""

import itertools
from functools import partial

from labkit.tools.answer import ANSWER_STRATEGY, tool_message
from labkit.tools.calendar_service import ServiceTransport
from labkit.tools.calls import first_model_call, model_started_payload, second_model_call
from labkit.tools.config import ToolTrace
from labkit.tools.confirm import (
    Confirmation,
    ConfirmationError,
    authorization_decision,
    check_confirmation,
    confirmation_card,
    invocation_digest,
)
from labkit.tools.executor import Crash, Executor
from labkit.tools.recovery import execute_and_recover
from labkit.tools.seams import idempotency_key
from labkit.tools.states import State
from labkit.tools.tokenizer import PROPOSAL_ID
from labkit.tools.toolspec import VALIDATOR_NAME, ProposalError, parse_arguments, validate_arguments

CANCELLED_AFTER_COMMIT = "cancelled-after-commit"  # §7.13's request status
RECOVERY_GUIDANCE = "the event exists; query it by event ID or idempotency key, or delete it with calendar.delete_event"


def propose(run: ToolTrace) -> None:
    """t00–t01, mc_01: prefill the prompt, decode the arguments under the grammar mask."""
    rec, config = run.rec, run.config
    first = run.first_call = first_model_call(run.decoder, run.spec, config.user_text, run.hooks.proposal_mask)
    rec.emit("model runtime", "model.started", 0, model_started_payload(first, run.artifacts))
    generated = first.decode.text.encode("utf-8")
    run.arguments_bytes = config.faults.parser_input(generated)  # the bytes the parser receives
    steps = first.decode.steps
    proposal = {
        "model_call_id": first.model_call_id,
        "proposal_id": PROPOSAL_ID,
        "state": run.state,
        "generated_tokens": len(steps),
        "token_ids": list(first.decode.token_ids),
        "allowed_counts": [s.allowed_count for s in steps],
        "forced_steps": sum(s.allowed_count == 1 for s in steps),  # one token allowed: the mask chose
        "arguments_utf8_hex": generated.hex(),
        "finish_reason": first.decode.finish_reason,
        "final_cache_length": first.cache.length,
    }
    rec.emit("decoder", "proposal.generated", len(steps), proposal)


def parse(run: ToolTrace) -> str | None:
    """t02: the proposal's bytes parse as one JSON object, or the proposal is rejected."""
    try:
        arguments = parse_arguments(run.arguments_bytes)
    except ProposalError as exc:
        received = run.arguments_bytes.hex()
        run.enter(State.PARSE_REJECTED, "JSON parser", "proposal.rejected", received_utf8_hex=received, reason=str(exc))
        return "rejected"
    run.arguments = run.config.faults.parsed(arguments)  # what validation receives, past the grammar
    run.move(State.PARSED)
    parsed = {"proposal_id": PROPOSAL_ID, "state": run.state, "keys": list(run.arguments)}
    run.rec.emit("JSON parser", "proposal.parsed", None, parsed)
    return None


def validate(run: ToolTrace) -> str | None:
    """t03: the arguments against the ToolSpec's JSON Schema."""
    errors = validate_arguments(run.spec, run.arguments)
    checked = {"validator": VALIDATOR_NAME, "format_checker": True}
    if errors:
        found = {"keys": list(run.arguments), **checked, "errors": [list(e) for e in errors]}
        run.enter(State.VALIDATION_REJECTED, "validator", "schema.rejected", **found)
        return "rejected"
    run.enter(State.VALIDATED, "validator", "schema.validated", **checked, errors=[])
    return None


def normalize(run: ToolTrace) -> None:
    """t04: the Invocation, in absolute time; from here on the journal records every state."""
    config = run.config
    invocation = run.invocation = config.invocation(run.spec, run.arguments)
    run.machine.attach(run.journal, invocation.to_json(), config.retry_budget)
    clock = {"reference_clock": config.clock, "timezone": config.timezone}
    normalized = {"invocation_id": invocation.invocation_id, **clock, "invocation": invocation.to_json()}
    run.report("normalizer", "invocation.normalized", **normalized)


def authorize(run: ToolTrace) -> str | None:
    """t05: may this subject do this, on this calendar?"""
    decision = authorization_decision(run.invocation, run.config.subject, run.config.capabilities)
    auth = {"subject": decision.subject, "capability": decision.capability, "scope": decision.scope}
    if not decision.allowed:
        run.enter(State.AUTHORIZATION_DENIED, "authorizer", "authorization.denied", **auth, reason=decision.reason)
        return "denied"
    run.enter(State.AUTHORIZED, "authorizer", "authorization.allowed", **auth, reason=decision.reason)
    return None


def confirm(run: ToolTrace) -> str | None:
    """t06–t07: the user approves a card bound to the digest of the Invocation presented for execution."""
    config, invocation = run.config, run.invocation
    digest = invocation_digest(invocation)
    card = confirmation_card(invocation, config.timezone)
    requested = {"invocation_id": invocation.invocation_id, "invocation_digest": digest, "card": card}
    run.enter(State.PREPARED, "confirmation", "confirmation.requested", **requested)
    approved = config.faults.stored_approval(digest)  # what the approval store gives back
    confirmation = run.confirmation = Confirmation("confirm_01", invocation.invocation_id, approved, "approve")
    run.presented = config.faults.presented(invocation)  # the Invocation presented for execution
    known = {invocation.invocation_id: invocation, run.presented.invocation_id: run.presented}
    decided = {"confirmation_id": confirmation.confirmation_id, "decision": confirmation.decision}
    try:
        check_confirmation(confirmation, run.presented, known, matches=run.hooks.digest_matches)
    except ConfirmationError as exc:
        presented = {
            "presented_invocation_id": run.presented.invocation_id,
            "presented_digest": invocation_digest(run.presented),
        }
        rejected = {**decided, "approved_digest": approved, **presented, "digest_matches": False, "reason": str(exc)}
        run.enter(State.CONFIRMATION_REJECTED, "confirmation", "confirmation.rejected", **rejected)
        return "needs_new_confirmation"
    approval = {"invocation_digest": confirmation.invocation_digest, "digest_matches": True}
    run.report("confirmation", "confirmation.approved", **decided, **approval)
    return None


def cancelled_before_execute(run: ToolTrace) -> str | None:
    """A cancel that arrives before the execution: nothing was sent, nothing exists."""
    if not run.config.faults.cancels("before_execute"):
        return None
    run.enter(State.CANCELLED, "runtime", "request.cancelled", side_effect=False)
    return "cancelled"


def execute(run: ToolTrace) -> str | None:
    """t08–t09: execute with an idempotency key; the commit boundary is the service's event ID.  After a
    crash (``config.crashes``) a restart recovers from the journal (``execute_and_recover``)."""
    config, approved = run.config, run.confirmation.invocation_digest
    run.journal.update(run.invocation.invocation_id, approved_digest=approved)
    transport = config.faults.transport(run.service)
    try:
        run.machine, run.result, run.restarts = execute_and_recover(
            run.journal, run.machine, run.presented, approved, incarnations(run, transport), partial(restarted, run)
        )
    except ConfirmationError as exc:  # the executor's own guard: nothing was sent
        presented = {"invocation_id": run.presented.invocation_id, "approved_digest": approved}
        refused = {"presented_digest": invocation_digest(run.presented), "reason": str(exc), "side_effect": False}
        run.enter(State.CONFIRMATION_REJECTED, "executor", "execution.refused", **presented, **refused)
        return "needs_new_confirmation"
    if run.result is None:
        return "failed" if run.machine.state is State.FAILED else "outcome_unknown"
    return None


def incarnations(run: ToolTrace, transport: ServiceTransport):
    """One Executor per incarnation of the runtime (the first, then each restart's), each with its crash plan."""
    config = run.config
    executor = partial(Executor, transport, config.request_id, config.retry_budget, policy=config.faults.policy)
    for crash in itertools.chain(config.crashes, itertools.repeat(None)):
        run.executor = executor(crash, emit=run.rec.emit, next_event_id=run.rec.next_event_id)
        yield run.executor


def restarted(run: ToolTrace, crashed: Crash) -> None:
    """The runtime died; a restarted one is about to resolve the Invocation from the journal."""
    journal, invocation_id = run.journal, run.invocation.invocation_id
    state = journal.entry(invocation_id).state
    run.rec.emit("runtime", "runtime.crashed", None, {"journal_state": state, "reason": str(crashed)})
    transitions = len(journal.transitions(invocation_id))
    run.rec.emit("runtime", "runtime.recovered", None, {"journal_state": state, "journal_transitions": transitions})


def cancelled_after_commit(run: ToolTrace) -> str | None:
    """A cancel that arrives after the commit: the event exists, the summary is skipped."""
    if not run.config.faults.cancels("after_commit"):
        return None
    commit = {"status": run.result["status"], "event_id": run.result["event_id"]}
    skipped = {"second_model_call": "skipped", "commit": commit, "guidance": RECOVERY_GUIDANCE}
    run.report("runtime", "request.cancelled", side_effect=True, **skipped)
    return CANCELLED_AFTER_COMMIT


def observe(run: ToolTrace) -> None:
    """t10: the service's result becomes a tool message."""
    run.tool_message = tool_message(run.result, PROPOSAL_ID)
    run.enter(State.OBSERVED, "runtime", "result.encoded", side_effect=True, tool_message=run.tool_message)


def answer(run: ToolTrace) -> None:
    """t11–t13, mc_02: sees the tool result (reusing mc_01's prefix cache), then answers."""
    rec, result = run.rec, run.result
    reuse, zone = run.hooks.reusable_prefix, run.config.timezone
    approved = {**run.presented.normalized_arguments, "tool_call_id": PROPOSAL_ID}
    second = run.second_call = second_model_call(
        run.decoder, run.spec, run.config.user_text, run.first_call, run.tool_message, reuse, zone, approved
    )
    started = model_started_payload(second, {**run.artifacts, "sampler": ANSWER_STRATEGY})
    seen = {"tool_result_status": result["status"], "tool_result_event_id": result["event_id"]}
    rec.emit("model runtime", "model.started", 0, {**started, "tool_call_id": PROPOSAL_ID, **seen})
    decoded, call = second.decode, {"model_call_id": second.model_call_id}
    deltas = [s.piece for s in decoded.steps if s.chosen_id != second.slots.eos_id]
    streamed = {"deltas": deltas, "token_ids": list(decoded.token_ids), "utf8_hex": decoded.text.encode("utf-8").hex()}
    rec.emit("transport", "text.delta", len(decoded.steps), {**call, **streamed})
    completed = {"finish_reason": decoded.finish_reason, "text": decoded.text, "output_tokens": len(decoded.token_ids)}
    rec.emit("runtime", "response.completed", None, {**call, **completed, "final_cache_length": second.cache.length})
    run.answer = decoded.text


def close_trace(run: ToolTrace, status: str) -> ToolTrace:
    """The last event: the request status, the calendar's state and the Invocation's history."""
    service, run.request_status = run.service, status
    events, for_key = sorted(service.store), service.events_with_key(idempotency_key(run.config.request_id))
    commit = {"calendar_events": events, "events_for_key": for_key, "executions": service.executions}
    history = [f"{a}→{b}" for a, b, _ in run.machine.history]
    closed = {"request_status": status, "external_commit": bool(events), "commit": commit, "state_history": history}
    run.report("tracing", "trace.closed", **closed)
    return run


#: the phases up to the confirmation (t00–t07), then the whole run in event order (``run_tool_trace`` runs
#: them until one ends the request)
PROPOSAL = (propose, parse, validate, normalize, authorize, confirm)
PHASES = (*PROPOSAL, cancelled_before_execute, execute, cancelled_after_commit, observe, answer)
#: the phases from an Invocation to its observed result (what ``labkit.tools.schedules`` runs)
EXECUTION = PHASES[PHASES.index(authorize) : PHASES.index(answer)]
