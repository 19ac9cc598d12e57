"""The properties behind page 10's ``fingerprinted_execute``: the reader's idempotent execute inside the
calendar service under fault schedules beside the runtime's own service, and against clients whose declared
digest cannot be trusted. A broken promise raises ``Diverged``.
"""

import dataclasses
import random
from functools import lru_cache

from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, Diverged, call, failure
from labkit.tools.calendar_service import OUTCOMES, CalendarService, CreateRequest, IdempotencyConflict
from labkit.tools.confirm import request_digest
from labkit.tools.executor import CRASH_POINTS, CrashPlan
from labkit.tools.fixture import fixture_invocation
from labkit.tools.runtime import ToolRunConfig
from labkit.tools.schedules import CANCELS, FaultSchedule, invariant_violations, run_schedule

#: what the service does with a request (a verdict names one of them)
VERBS = ("perform", "refuse", "replay")
PROMISE = "the service's fingerprint of the parameters decides: new key → perform; same → stored; other → conflict"


class Service:
    """What the reader's execute is handed for one request: the key's record, and the first execution
    of a request, whose record holds the digest the service chose (the runtime's desk stores the
    request's own, the client's declaration)."""

    def __init__(self, desk):
        self._desk = desk

    def stored(self, key: str) -> dict | None:
        """The idempotency record of ``key``: {"request_digest": …, "response": {…}}, or None."""
        return self._desk.stored(key)

    def perform(self, request, request_digest: str) -> dict:
        """Execute ``request`` for the first time; its record holds ``request_digest``."""
        if not (isinstance(request_digest, str) and request_digest.startswith("sha256:")):
            text = "perform's request_digest must be a 'sha256:…' digest, got {request_digest!r:.60}"
            raise CandidateProblem(say(text, request_digest=request_digest))
        return self._desk.perform(dataclasses.replace(request, request_digest=request_digest))

    def __repr__(self) -> str:
        return "Service(stored(key), perform(request, request_digest))"


def service_piece(candidate):
    """The reader's execute as the service's: an IdempotencyConflict is the service's refusal, any
    other error or a response without a status is the reader's to fix."""

    def piece(desk, key, digest, request):
        try:
            response = call(candidate, Service(desk), key, digest, request)
        except CandidateProblem as problem:
            if "IdempotencyConflict" in str(problem):  # the reader's code raised it (in any language)
                raise IdempotencyConflict(str(problem)) from None
            raise
        if not isinstance(response, dict) or "status" not in response:
            shown = repr(response)[:80]
            if isinstance(response, dict):
                shown = say("a dict with keys {keys}", keys=sorted(response))
            raise CandidateProblem(say("execute must return a response dict with a 'status', got {shown}", shown=shown))
        return response

    return piece


def schedules(seed: int, drawn: int) -> list[tuple[str, FaultSchedule]]:
    """Named fault schedules, then ``drawn`` drawn with ``seed``."""
    crash = FaultSchedule(("lose_response", "duplicate_request"), crashes=(CrashPlan("after_service_commit", None),))
    named = [
        ("the request delivered twice", FaultSchedule(("duplicate_request",))),
        ("not committed, then delivered twice", FaultSchedule(("not_committed", "duplicate_request"))),
        ("a crash after the service committed, then a duplicate", crash),
    ]
    rng = random.Random(seed)
    for index in range(drawn):
        transport = tuple(rng.choice(OUTCOMES) for _ in range(rng.randint(0, 5)))
        crashes = tuple(CrashPlan(rng.choice(CRASH_POINTS), rng.randint(1, 4)) for _ in range(rng.randint(0, 2)))
        schedule = FaultSchedule(transport, crashes=crashes, cancel=rng.choice(CANCELS), retry_budget=rng.randint(1, 4))
        named.append((f"schedule {index + 1} drawn with seed {seed}", schedule))
    return named


def _summary(outcome) -> tuple:
    """(final state, request status, calendar, executions): what two services' runs must share."""
    return outcome.final_state, outcome.request_status, sorted(outcome.service.store), outcome.service.executions


@lru_cache(maxsize=256)
def _runtime_summary(schedule: FaultSchedule) -> tuple:
    return _summary(run_schedule(schedule))


def service_under_schedules(candidate, drawn: tuple[int, int]) -> None:
    """Every promise kept, and every run ends as the runtime's own service's does."""
    for case, schedule in schedules(*drawn):
        outcome = run_schedule(schedule, service_execute=service_piece(candidate))
        problems = invariant_violations(outcome)
        if problems or _summary(outcome) != _runtime_summary(schedule):
            message = say("the run ends otherwise than with a correct service")
            if problems:
                message = say("the run broke a promise")
            where = say("{case}: transport {transport_plan}", case=case, transport_plan=list(schedule.transport_plan))
            got = problems[0] if problems else _summary(outcome)
            raise Diverged(failure(message, where=where, rule=say(PROMISE), got=got))


def clients() -> list[tuple[str, list[tuple[str, str, dict, str]]]]:
    """Clients whose declared digest cannot be trusted: (case, [(key, declared digest, arguments, what
    the service must do)])."""
    honest = fixture_invocation().normalized_arguments
    moved = {**honest, "start": "2026-07-20T10:00:00+08:00"}
    said, other = request_digest(honest), request_digest(moved)
    changed = [("req-7:1", said, honest, "perform"), ("req-7:1", said, moved, "refuse")]
    bogus = [("req-8:1", "sha256:" + "0" * 64, honest, "perform"), ("req-8:1", said, honest, "replay")]
    borrowed = [
        ("req-9:1", other, honest, "perform"),
        ("req-9:1", other, honest, "replay"),
        ("req-9:1", other, moved, "refuse"),
    ]
    return [
        ("a changed request under the same key, declaring the old digest", changed),
        ("a wrong digest on a new key, then an honest retry", bogus),
        ("a request declaring another request's digest, retried, then changed", borrowed),
    ]


def _send(service: CalendarService, key: str, declared: str, arguments: dict) -> dict | str:
    request = CreateRequest(key, declared, "user-42/primary", fixture_invocation().tool, dict(arguments))
    try:
        return service.create_event(request)
    except IdempotencyConflict:
        return "refused"


def service_against_clients(candidate, sequences) -> None:
    """Each client's requests, in order, to a fresh service running the reader's execute."""
    for case, requests in sequences():
        service = CalendarService(ToolRunConfig().service_clock, execute=service_piece(candidate))
        first_event = None
        for number, (key, declared, arguments, must) in enumerate(requests, start=1):
            before = service.executions
            answer = _send(service, key, declared, arguments)
            performed = service.executions - before
            if isinstance(answer, dict) and answer.get("status") == "ok":
                first_event = first_event or answer.get("event_id")
            did = _what_it_did(answer, performed, first_event)
            if did != must:
                text = "{case}: request #{number} (key {key}, start {arguments})"
                where = say(text, case=case, number=number, key=key, arguments=arguments["start"][11:16])
                message = say("the service should {must} this request", must=say(must))
                raise Diverged(failure(message, where=where, rule=say(PROMISE), got=did))


def _what_it_did(answer, performed: int, first_event: str | None) -> str:
    if answer == "refused":
        return "refuse" if not performed else say("performed it {performed} time(s), then refused", performed=performed)
    if performed:
        return "perform" if performed == 1 else say("performed it {performed} times", performed=performed)
    if answer.get("event_id") == first_event:
        return "replay"
    return say("answered {answer!r:.80} without performing", answer=answer)
