"""Exercise of page 10 (§7.14–7.15): the service's idempotent execute decides every request in three
scenarios, under 28 fault schedules and for a reused key; the first wrong decision stops the run.
"""

from __future__ import annotations

import random

from labkit.check.core import trace
from labkit.check.grading import CandidateProblem, Diverged, call, failure
from labkit.check.tools import scenario
from labkit.tools.calendar_service import OUTCOMES, CalendarService, IdempotencyConflict, ServiceTransport
from labkit.tools.confirm import invocation_digest
from labkit.tools.executor import CRASH_POINTS, CrashPlan, Executor
from labkit.tools.fixture import fixture_invocation
from labkit.tools.runtime import ToolRunConfig
from labkit.tools.schedules import CANCELS, FaultSchedule, invariant_violations, run_schedule
from labkit.tools.states import InvocationMachine, State

PERFORM = "perform the request (the key is new)"
REPLAY = "return the stored result (same key, same digest: a retry)"
CONFLICT = "raise IdempotencyConflict (same key, another digest), performing nothing"


class _Service:
    """The reader's execute as the service's idempotency decision; ``calls`` records each one:
    the key, what the table held, what the reader did, what it should have done."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[dict] = []

    def __call__(self, desk, key, request_digest, request):
        record = desk.stored(key)
        expected = PERFORM if record is None else REPLAY if record["request_digest"] == request_digest else CONFLICT
        entry = {"key": key, "stored": record, "expected": expected}
        self.calls.append(entry)
        try:
            response = call(self.candidate, desk, key, request_digest, request)
        except CandidateProblem as problem:
            if "raised IdempotencyConflict" not in str(problem):
                raise
            entry["did"] = "performed it, then raised IdempotencyConflict" if desk.performed else CONFLICT
            raise IdempotencyConflict(str(problem)) from None
        if not isinstance(response, dict) or "status" not in response:
            shown = f"a dict with keys {sorted(response)}" if isinstance(response, dict) else repr(response)[:80]
            raise CandidateProblem(
                "execute must return a response dict with a 'status' (what perform returns, "
                f"or the stored record's 'response'), got {shown}"
            )
        entry["did"] = _what_it_did(desk.performed, record, response)
        return response

    def first_wrong(self) -> dict | None:
        return next((c for c in self.calls if c.get("did") != c["expected"]), None)


def _what_it_did(performed: int, record: dict | None, response: dict) -> str:
    if performed > 1:
        return f"performed the request {performed} times"
    if performed:
        return PERFORM
    if record is not None and record["response"] in (response, {k: v for k, v in response.items() if k != "replayed"}):
        return REPLAY
    return f"returned {response!r} without performing anything"


def _stop_at_wrong_decision(case: str, service: _Service, detail: str | None = None) -> None:
    """Raise ``Diverged`` at the service's first wrong idempotency decision of the run ``case``."""
    wrong = service.first_wrong()
    if wrong is None:
        return
    number = service.calls.index(wrong) + 1
    record = wrong["stored"]
    held = "nothing"
    if record is not None:
        held = f"digest {record['request_digest'][:19]}…, status {record['response'].get('status')}"
    raise Diverged(
        failure(
            "the service's idempotency decision is wrong" + (f" ({detail})" if detail else ""),
            where=f"{case}: request #{number} to the service (key {wrong['key']}, table held {held})",
            rule="idempotency: new key → perform; same digest → stored result; other digest → conflict",
            got=wrong.get("did", "?"),
            expected=wrong["expected"],
        )
    )


def _schedules():
    """Named fault schedules, then 24 drawn with a fixed seed (as on page 10)."""
    lost_then_crash = FaultSchedule(("lose_response",), crashes=(CrashPlan("after_record", 1),))
    committed_crash = (CrashPlan("after_service_commit", None),)
    named = [
        ("the request delivered twice", FaultSchedule(("duplicate_request",))),
        ("not committed, then delivered twice", FaultSchedule(("not_committed", "duplicate_request"))),
        ("answer lost, then a crash before recording", lost_then_crash),
        (
            "a crash after the service committed, then a duplicate",
            FaultSchedule(("lose_response", "duplicate_request"), crashes=committed_crash),
        ),
    ]
    rng = random.Random(20260719)
    for index in range(24):
        transport = tuple(rng.choice(OUTCOMES) for _ in range(rng.randint(0, 5)))
        crashes = tuple(CrashPlan(rng.choice(CRASH_POINTS), rng.randint(1, 4)) for _ in range(rng.randint(0, 2)))
        drawn = FaultSchedule(transport, crashes=crashes, cancel=rng.choice(CANCELS), retry_budget=rng.randint(1, 4))
        named.append((f"random schedule {index + 1}", drawn))
    return named


def _summary(outcome) -> tuple:
    """(final state, request status, calendar, executions): what the library's run and the reader's must share."""
    return outcome.final_state, outcome.request_status, sorted(outcome.service.store), outcome.service.executions


def _in_scenario(name: str):
    label, expected, run = scenario(name, "service_execute")

    def checked(candidate):
        service = _Service(candidate)
        events = run(service)
        _stop_at_wrong_decision(f"scenario {name}", service)
        return events

    return label, expected, checked


def _under_schedules(candidate) -> None:
    for case, schedule in _schedules():
        service = _Service(candidate)
        outcome = run_schedule(schedule, service_execute=service)
        problems = invariant_violations(outcome)
        _stop_at_wrong_decision(case, service, problems[0] if problems else None)
        reference = _summary(run_schedule(schedule))
        if problems or _summary(outcome) != reference:  # pragma: no cover - decisions agreed
            raise Diverged(
                failure("the run broke a promise", where=case, got=problems or _summary(outcome), expected=reference)
            )


def _changed_request(candidate) -> None:
    """The same request key reused for a changed request (10:00): a conflict, nothing executed."""
    service = _Service(candidate)
    calendar = CalendarService(ToolRunConfig().service_clock, execute=service)
    invocation = fixture_invocation()
    later = invocation.with_arguments("inv_02", start="2026-07-20T10:00:00+08:00")
    request_id = ToolRunConfig().request_id  # the runtime's request, never retyped
    for inv in (invocation, later):
        machine = InvocationMachine(State.PREPARED)
        Executor(ServiceTransport(calendar), request_id, 1).execute(machine, inv, invocation_digest(inv))
    _stop_at_wrong_decision(f"request {request_id} resent with start 10:00", service)
    if sorted(calendar.store) != ["evt_6K2"] or machine.state is not State.FAILED:  # pragma: no cover
        raise Diverged(failure("the changed request was not refused", where=request_id, got=sorted(calendar.store)))


@trace
def idempotent_execute():
    scenarios = [_in_scenario(name) for name in ("happy", "timeout_before_commit", "response_lost_after_commit")]
    return [*scenarios, ("the fault schedules", None, _under_schedules), ("a reused key", None, _changed_request)]
