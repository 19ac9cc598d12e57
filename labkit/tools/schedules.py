"""Random fault schedules for the execution half of trace three (no model needed).

A ``FaultSchedule`` fixes everything that can go wrong after the proposal: the transport's
outcome per attempt (timeouts before and after the commit, lost requests and responses,
duplicated requests and duplicated responses, unavailability), the outcome of each lookup
by key (answered or unavailable), crashes of the runtime at any crash point (each
restart may crash again), a cancellation, the retry budget, a missing capability and a
confirmation that does not match.  ``run_schedule`` drives the §7.12 Invocation through
authorisation, confirmation, execution and — after every crash — recovery from the
journal, and returns what is left: the journal, the service and the final state.
``invariant_violations`` lists every broken promise (an empty list means none):

* the calendar holds at most one event per idempotency key;
* every COMMITTED/OBSERVED Invocation has exactly its event, and every event belongs to a
  committed Invocation — or to one that ended OUTCOME_UNKNOWN, under the key it names for the
  query (``resolve_later`` then settles it by that query, without executing);
* nothing executes without an allowed authorisation and a matching confirmation;
* the final state is one of the documented terminal states.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.tools.authorize import Principal, authorize
from labkit.tools.calendar_service import CalendarService, ServiceTransport
from labkit.tools.confirm import invocation_digest
from labkit.tools.executor import Crash, CrashPlan, Executor
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.recovery import recover_invocation
from labkit.tools.states import TERMINAL, InvocationMachine, State

CANCELS = ("none", "before_execute", "after_commit")
#: (final state, request status) pairs a run may end in
TERMINAL_OUTCOMES = {
    ("OBSERVED", "completed"),
    ("COMMITTED", "cancelled-after-commit"),
    ("FAILED", "failed"),
    ("AUTHORIZATION_DENIED", "denied"),
    ("CONFIRMATION_REJECTED", "needs_new_confirmation"),
    ("CANCELLED", "cancelled"),
    ("OUTCOME_UNKNOWN", "outcome_unknown"),
}


def fixture_invocation() -> Invocation:
    """The §7.12 Invocation inv_01 (what the happy path normalises to)."""
    return Invocation(
        "inv_01",
        "calendar.create_event@v1",
        {"calendar_id": "primary", "title": "带护照", "start": "2026-07-20T09:00:00+08:00", "duration_minutes": 10},
        "user-42",
        "calendar.write:primary",
    )


@dataclass(frozen=True)
class FaultSchedule:
    transport_plan: tuple[str, ...] = ()
    query_plan: tuple[str, ...] = ()
    crashes: tuple[CrashPlan, ...] = ()
    cancel: str = "none"
    retry_budget: int = 3
    authorized: bool = True
    confirmation_matches: bool = True

    def __post_init__(self):
        if self.cancel not in CANCELS:
            raise ValueError(f"cancel must be one of {list(CANCELS)}, got {self.cancel!r}")
        if self.retry_budget < 1:
            raise ValueError(f"retry_budget must be >= 1, got {self.retry_budget}")


@dataclass
class ScheduleOutcome:
    schedule: FaultSchedule
    invocation: Invocation
    machine: InvocationMachine
    journal: Journal
    service: CalendarService
    request_status: str
    restarts: int
    result: dict | None

    @property
    def final_state(self) -> str:
        return self.machine.state.value


def run_schedule(
    schedule: FaultSchedule, invocation: Invocation | None = None, *, service_execute=None
) -> ScheduleOutcome:
    """Authorise, confirm, execute and recover under ``schedule``; never raises ``Crash``.

    ``service_execute`` replaces the calendar service's idempotent execute (a hook, see
    ``labkit.tools.hooks``)."""
    invocation = invocation or fixture_invocation()
    journal, service = (Journal(), CalendarService("2026-07-19T14:00:04+08:00", execute=service_execute))
    machine = InvocationMachine()
    machine.move(State.PARSED)
    machine.move(State.VALIDATED)
    machine.attach(journal, invocation.to_json(), schedule.retry_budget)

    def done(status: str, restarts: int = 0, result: dict | None = None) -> ScheduleOutcome:
        return ScheduleOutcome(schedule, invocation, machine, journal, service, status, restarts, result)

    capabilities = ("calendar.read", "calendar.write:primary") if schedule.authorized else ("calendar.read",)
    if not authorize(invocation, Principal(invocation.subject, capabilities)).allowed:
        machine.move(State.AUTHORIZATION_DENIED)
        return done("denied")
    machine.move(State.AUTHORIZED)
    machine.move(State.PREPARED)
    digest = invocation_digest(invocation)
    approved = digest if schedule.confirmation_matches else "sha256:" + "0" * 64
    if approved != digest:
        machine.move(State.CONFIRMATION_REJECTED)
        return done("needs_new_confirmation")
    if schedule.cancel == "before_execute":
        machine.move(State.CANCELLED)
        return done("cancelled")
    journal.update(invocation.invocation_id, approved_digest=approved)

    transport = ServiceTransport(service, schedule.transport_plan, schedule.query_plan)
    crashes = list(schedule.crashes)
    executor = Executor(transport, "req-42", schedule.retry_budget, crash=crashes.pop(0) if crashes else None)
    restarts = 0
    try:
        result = executor.execute(machine, invocation, approved)
    except Crash:
        result = None
        while True:  # restart, possibly crash again while recovering
            restarts += 1
            executor = Executor(transport, "req-42", schedule.retry_budget, crash=crashes.pop(0) if crashes else None)
            try:
                machine, result = recover_invocation(journal, executor, invocation.invocation_id)
                break
            except Crash:
                continue
    if machine.state is not State.COMMITTED:
        return done("failed" if machine.state is State.FAILED else "outcome_unknown", restarts, result)
    if schedule.cancel == "after_commit":
        return done("cancelled-after-commit", restarts, result)
    machine.move(State.OBSERVED)
    return done("completed", restarts, result)


def invariant_violations(outcome: ScheduleOutcome) -> list[str]:
    """Every broken promise of ``outcome`` (empty: all kept)."""
    problems = []
    service, journal = outcome.service, outcome.journal
    store = service.store
    keys = {record["idempotency_key"] for record in store.values()}
    for key in sorted(keys):
        events = service.events_with_key(key)
        if len(events) > 1:
            problems.append(f"key {key} has {len(events)} events: {events}")
    entry = journal.entry(outcome.invocation.invocation_id)
    committed = entry.state in (State.COMMITTED.value, State.OBSERVED.value)
    unknown = entry.state == State.OUTCOME_UNKNOWN.value
    if committed:
        mine = service.events_with_key(entry.idempotency_key)
        if len(mine) != 1:
            problems.append(f"{entry.state} invocation has {len(mine)} events for its key {entry.idempotency_key}")
        elif outcome.result is None or outcome.result.get("event_id") != mine[0]:
            problems.append(f"committed result {outcome.result} does not name the stored event {mine[0]}")
    if unknown and outcome.request_status != "outcome_unknown":
        problems.append(f"OUTCOME_UNKNOWN reported as {outcome.request_status!r}")
    stray = [
        e for e, rec in store.items() if not (committed or unknown) or rec["idempotency_key"] != entry.idempotency_key
    ]
    if stray:
        problems.append(f"events without a committed invocation: {stray}")
    s = outcome.schedule
    if (not s.authorized or not s.confirmation_matches or s.cancel == "before_execute") and service.requests:
        problems.append(f"{service.requests} requests reached the service without authorisation/confirmation")
    if outcome.machine.state not in TERMINAL:
        problems.append(f"final state {outcome.final_state} is not terminal")
    if (outcome.final_state, outcome.request_status) not in TERMINAL_OUTCOMES:
        problems.append(f"undocumented ending {(outcome.final_state, outcome.request_status)}")
    if journal.entry(outcome.invocation.invocation_id).state != outcome.final_state:
        problems.append(f"journal says {entry.state}, the runtime ended in {outcome.final_state}")
    return problems


def resolve_later(outcome: ScheduleOutcome) -> tuple[str, dict | None]:
    """Settle an OUTCOME_UNKNOWN ending once the service answers again: a restart with a healthy
    transport queries by the journaled key.  Returns (state, result); executes nothing new."""
    healthy = Executor(ServiceTransport(outcome.service), "req-42", outcome.schedule.retry_budget)
    machine, result = recover_invocation(outcome.journal, healthy, outcome.invocation.invocation_id)
    outcome.machine = machine
    return machine.state.value, result
