"""The phases of trace three at and after the commit boundary (t08–t14): execute with an
idempotency key (and recover after a crash), the late cancellation, the observation the
model reads, its second call, and the closing event.  ``labkit.tools.phases`` holds the
phases before the boundary and the order of all of them.
"""

from __future__ import annotations

import itertools
from functools import partial

from labkit.tools.answer import ANSWER_STRATEGY
from labkit.tools.calendar_service import ServiceTransport
from labkit.tools.calls import model_started_payload, second_model_call
from labkit.tools.confirm import ConfirmationError, invocation_digest
from labkit.tools.executor import Crash, CrashPlan, Executor
from labkit.tools.recovery import execute_and_recover
from labkit.tools.run_state import ToolTrace
from labkit.tools.states import State
from labkit.tools.tokenizer import ToolTokenizer

CANCELLED_AFTER_COMMIT = "cancelled-after-commit"  # §7.13's request status
RECOVERY_GUIDANCE = "the event exists; query it by event ID or idempotency key, or delete it with calendar.delete_event"


def execute(run: ToolTrace) -> str | None:
    """t08–t09: execute with an idempotency key; the commit boundary is the service's event ID.
    A crash (``config.crash_point``) is followed by a restart that recovers from the journal
    (``execute_and_recover``: the one execute-and-recover path of trace three)."""
    config, approved = run.config, run.confirmation.invocation_digest
    run.journal.update(run.invocation.invocation_id, approved_digest=approved)
    transport = ServiceTransport(run.service, config.transport_plan, config.query_plan)
    try:
        run.machine, run.result, run.restarts = execute_and_recover(
            run.journal, run.machine, run.presented, approved, incarnations(run, transport), partial(restarted, run)
        )
    except ConfirmationError as exc:  # the executor's own guard: nothing was sent
        run.enter(
            State.CONFIRMATION_REJECTED,
            "executor",
            "execution.refused",
            invocation_id=run.presented.invocation_id,
            approved_digest=approved,
            presented_digest=invocation_digest(run.presented),
            reason=str(exc),
            side_effect=False,
        )
        return "needs_new_confirmation"
    if run.result is None:
        return "failed" if run.machine.state is State.FAILED else "outcome_unknown"
    return None


def incarnations(run: ToolTrace, transport: ServiceTransport):
    """One Executor per incarnation of the runtime (the first, then each restart's); each may die
    at its own crash plan."""
    config = run.config
    first = (CrashPlan(config.crash_point, config.crash_attempt),) if config.crash_point else ()
    for crash in itertools.chain(first, config.restart_crashes, itertools.repeat(None)):
        run.executor = Executor(
            transport,
            config.request_id,
            config.retry_budget,
            config.new_key_per_attempt,
            crash,
            emit=run.rec.emit,
            next_event_id=run.rec.next_event_id,
        )
        yield run.executor


def restarted(run: ToolTrace, crashed: Crash) -> None:
    """The runtime died mid-execution; a restarted one is about to resolve the Invocation from the journal."""
    journal, invocation_id = run.journal, run.invocation.invocation_id
    state = journal.entry(invocation_id).state
    run.rec.emit("runtime", "runtime.crashed", None, {"journal_state": state, "reason": str(crashed)})
    run.rec.emit(
        "runtime",
        "runtime.recovered",
        None,
        {"journal_state": state, "journal_transitions": len(journal.transitions(invocation_id))},
    )


def cancel_after_commit(run: ToolTrace) -> str | None:
    """A cancel that arrives after the commit: the event exists, the summary is skipped."""
    if not run.config.cancel_after_commit:
        return None
    commit = {"status": run.result["status"], "event_id": run.result["event_id"]}
    skipped = {"second_model_call": "skipped", "commit": commit, "guidance": RECOVERY_GUIDANCE}
    run.report("runtime", "request.cancelled", side_effect=True, **skipped)
    return CANCELLED_AFTER_COMMIT


def observe(run: ToolTrace) -> None:
    """t10: the service's result becomes a tool message."""
    result = run.result
    run.tool_message = {"tool_call_id": "p_01", **{k: result[k] for k in ("status", "event_id", "start")}}
    run.enter(State.OBSERVED, "runtime", "result.encoded", side_effect=True, tool_message=run.tool_message)


def answer(run: ToolTrace) -> None:
    """t11–t13, mc_02: sees the tool result (reusing mc_01's prefix cache), then answers."""
    rec, result = run.rec, run.result
    reuse, zone = run.hooks.reusable_prefix, run.config.timezone
    second = run.second_call = second_model_call(
        run.decoder, run.spec, run.config.user_text, run.first_call, run.tool_message, reuse, zone
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
    run.answer = decoded.text


def close_trace(run: ToolTrace, status: str) -> ToolTrace:
    """The last event: the request status, the calendar's state and the Invocation's history."""
    service, run.request_status = run.service, status
    run.report(
        "tracing",
        "trace.closed",
        request_status=status,
        external_commit=bool(service.store),
        commit={
            "calendar_events": sorted(service.store),
            "events_for_key": service.events_with_key(f"{run.config.request_id}:create-event:1"),
            "executions": service.executions,
        },
        state_history=[f"{a}→{b}" for a, b, _ in run.machine.history],
    )
    return run
