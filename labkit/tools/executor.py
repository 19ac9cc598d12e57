"""Execution under a retry budget: idempotency keys, the commit boundary, crash points.

``Executor.execute`` takes a PREPARED Invocation one attempt at a time to COMMITTED or an honest failure;
each attempt journals ``→ EXECUTING`` with its key before the request leaves and reuses the key of the
attempts before it.  No answer means OUTCOME_UNKNOWN and a query by that key, never a guess; an answer
naming another request (``reply_to``) is dropped.  Key naming and journal order are the ``policy``
(``labkit.tools.seams``); ``CrashPlan`` kills the runtime at one of ``CRASH_POINTS``.

The retry rules (under the default policy, whose key is attempt 1's): "not committed"/"unavailable" →
another attempt with the same key ("error", the service refusing the request, or an idempotency conflict
→ FAILED at once); a failed query → the next attempt resends that key (the service replays a commit); after
an unsettled OUTCOME_UNKNOWN a "not committed" speaks for its own attempt only and leads to a query again;
a spent budget ends FAILED after "not committed", else stays OUTCOME_UNKNOWN naming the key to query;
nothing is sent unless the approved digest is the Invocation's (``execute``).
"""

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

from labkit.tools.calendar_service import (
    CreateRequest,
    IdempotencyConflict,
    QueryUnavailable,
    ServiceTransport,
    TransportTimeout,
)
from labkit.tools.confirm import ConfirmationError, invocation_digest, request_digest
from labkit.tools.normalize import Invocation
from labkit.tools.seams import ExecutionPolicy
from labkit.tools.states import InvocationMachine, State

#: before_attempt: the approval (or the previous attempt's outcome) is journaled, this attempt
#:     has not begun — for attempt 1 the restart finds PREPARED with an approved digest;
#: after_journal_write: EXECUTING is journaled, nothing sent yet;
#: after_send: the request has left (the service may have it); the runtime dies before it reads any answer;
#: after_service_commit: the service committed, the runtime dies before recording the answer;
#: after_record: the attempt's outcome is journaled, the runtime dies before going on.
CRASH_POINTS = ("before_attempt", "after_journal_write", "after_send", "after_service_commit", "after_record")


class Crash(RuntimeError):
    """The runtime process died here; only the journal and the service's store survive."""


@dataclass(frozen=True)
class CrashPlan:
    """Die at ``point`` of attempt ``attempt`` (None: the first attempt that reaches the point)."""

    point: str
    attempt: int | None = None

    def __post_init__(self):
        if self.point not in CRASH_POINTS:
            raise ValueError(f"crash point must be one of {list(CRASH_POINTS)}, got {self.point!r}")
        if self.attempt is not None and self.attempt < 1:
            raise ValueError(f"crash attempt must be >= 1, got {self.attempt}")


@dataclass
class Executor:
    """Runs the attempts of one Invocation; ``emit`` records events, ``next_event_id`` names them."""

    transport: ServiceTransport
    request_id: str
    retry_budget: int
    crash: CrashPlan | None = None
    emit: Callable = lambda *event: None
    next_event_id: Callable[[], str | None] = lambda: None
    policy: ExecutionPolicy = ExecutionPolicy()

    def key(self, attempt: int) -> str:
        """The request's idempotency key (the policy's)."""
        return self.policy.key(self.request_id, attempt)

    def _crash_at(self, point: str, attempt: int) -> None:
        if self.crash is not None and self.crash.point == point and self.crash.attempt in (None, attempt):
            self.crash = None  # a process dies once
            raise Crash(f"runtime crashed {point.replace('_', ' ')} of attempt {attempt}")

    def _move(self, machine: InvocationMachine, state: State, detail: dict | None = None) -> None:
        machine.move(state, self.next_event_id(), detail)

    def report(self, machine: InvocationMachine, component: str, event_type: str, attempt, /, **payload) -> None:
        """Emit ``event_type``, its payload opening with the machine's state."""
        self.emit(component, event_type, attempt, {"state": machine.state.value, **payload})

    def _enter(self, machine: InvocationMachine, state: State, component: str, event_type: str, attempt, /, **payload):
        """``→ state``, then the event that reports it (its payload opens with that state)."""
        self._move(machine, state)
        self.report(machine, component, event_type, attempt, **payload)

    def _not_committed(self, machine, key: str, attempt: int | None, event_type="external.not_committed", **payload):
        """``→ NOT_COMMITTED`` on the calendar service's word: this request created no event."""
        said = {"idempotency_key": key, **payload}
        self._enter(machine, State.NOT_COMMITTED, "calendar service", event_type, attempt, **said)

    def _outcome_unknown(self, machine: InvocationMachine, key: str, attempt: int, **reason) -> dict | None:
        """``→ OUTCOME_UNKNOWN``, then what the policy does: a query by the same key (the result or None)."""
        unknown = {"idempotency_key": key, "side_effect": "unknown"}
        self._enter(
            machine, State.OUTCOME_UNKNOWN, "executor", "external.outcome_unknown", attempt, **unknown, **reason
        )
        self._crash_at("after_record", attempt)
        assumed = (machine, State.NOT_COMMITTED, "executor", "external.assumed_not_committed", attempt)
        return self.policy.after_unknown(
            lambda: self.resolve_unknown(machine, key, attempt), lambda: self._enter(*assumed, **unknown)
        )

    def execute(
        self, machine: InvocationMachine, invocation: Invocation, approved_digest: str, first_attempt: int = 1
    ) -> dict | None:
        """Attempts ``first_attempt``…budget; the committed result, or None (FAILED)."""
        if approved_digest != invocation_digest(invocation):
            raise ConfirmationError(
                f"refusing to execute {invocation.invocation_id}: the approved digest does not match it"
            )
        args = invocation.normalized_arguments
        scope = f"{invocation.subject}/{args['calendar_id']}"
        digest = request_digest(args)
        made = first_attempt - 1
        unknown = machine.state is State.OUTCOME_UNKNOWN  # an earlier attempt's outcome nobody knows yet
        for attempt in range(first_attempt, self.retry_budget + 1):
            self._crash_at("before_attempt", attempt)
            made, key = attempt, self.key(attempt)
            request = CreateRequest(key, digest, scope, invocation.tool, args, attempt)
            try:
                response = self._reply(machine, invocation, request)
            except TransportTimeout:
                response = None
            except IdempotencyConflict as exc:
                conflict = {"reason": str(exc), "commit": {"status": "conflict"}}
                self._not_committed(machine, key, attempt, "external.conflict", **conflict)
                self._move(machine, State.FAILED)
                return None
            status = None if response is None else response.get("status")
            if status == "ok":
                self._crash_at("after_service_commit", attempt)
                result = self.committed(machine, response, key, attempt, resolved_by="response")
                self._crash_at("after_record", attempt)
                return result
            # no answer; or "not executed", which speaks for this attempt only (an earlier one may have committed)
            if response is None or (unknown and status != "error"):
                unsettled = {"reason": f"the answer {status!r} does not settle an earlier attempt"} if response else {}
                result = self._outcome_unknown(machine, key, attempt, **unsettled)
                if result is not None:
                    return result
                unknown = machine.state is State.OUTCOME_UNKNOWN
                continue
            said = {k: response[k] for k in ("status", "code") if k in response}
            self._not_committed(machine, key, attempt, commit=said)
            self._crash_at("after_record", attempt)
            if status == "error":
                break
        return self.exhausted(machine, made)

    def _reply(self, machine: InvocationMachine, invocation: Invocation, request: CreateRequest) -> dict:
        """Journal and send ``request`` (in the policy's order); its reply, stale duplicates dropped."""
        try:
            response = self.policy.send(
                lambda: self._begin_attempt(machine, invocation, request), lambda: self.transport.send(request)
            )
        finally:
            self._crash_at("after_send", request.attempt)
        while response.get("reply_to", request.ref) != request.ref:
            stale = {"expected_reply_to": request.ref, "reply_to": response["reply_to"]}
            dropped = {"idempotency_key": request.idempotency_key, **stale, "dropped_status": response.get("status")}
            self.report(machine, "executor", "external.stale_reply_dropped", request.attempt, **dropped)
            response = self.transport.receive()
        return response

    def _begin_attempt(self, machine: InvocationMachine, invocation: Invocation, request: CreateRequest) -> None:
        """Journal the attempt: its key and digest, then ``→ EXECUTING`` (the commit boundary's gate)."""
        attempt, key, digest = request.attempt, request.idempotency_key, request.request_digest
        journal = machine.journal
        with nullcontext() if journal is None else journal.db.transaction():  # a kill leaves both or neither
            if journal is not None:
                journal.update(invocation.invocation_id, attempts=attempt, idempotency_key=key, request_digest=digest)
            self._move(machine, State.EXECUTING, {"attempt": attempt, "idempotency_key": key})
        event = "invocation.started" if attempt == 1 else "invocation.retried"
        started = {"attempt": attempt, "scope": request.scope, "artifacts": {"tool_version": invocation.tool}}
        sent = {"idempotency_key": key, "request_digest": digest, "side_effect": False}
        self.report(machine, "executor", event, attempt, **started, **sent)
        self._crash_at("after_journal_write", attempt)

    def resolve_unknown(self, machine: InvocationMachine, key: str, attempt: int | None) -> dict | None:
        """OUTCOME_UNKNOWN → query by the same key → COMMITTED or NOT_COMMITTED (never a blind retry);
        a failed query leaves OUTCOME_UNKNOWN as it is."""
        try:
            found = self.transport.query(key)
        except QueryUnavailable as exc:
            failed = {"idempotency_key": key, "side_effect": "unknown", "reason": str(exc)}
            self.report(machine, "executor", "external.query_failed", attempt, **failed)
            return None
        if found is not None and found.get("status") == "ok":
            return self.committed(machine, found, key, attempt, resolved_by="query")
        self._not_committed(machine, key, attempt, resolved_by="query", commit={"status": "not_committed"})
        return None

    def committed(self, machine, response: dict, key: str, attempt: int | None, *, resolved_by: str) -> dict:
        commit = {k: response[k] for k in ("status", "event_id", "committed_at", "start")}
        self._move(machine, State.COMMITTED, commit)
        settled = {"side_effect": True, "resolved_by": resolved_by, "commit": {**commit, "idempotency_key": key}}
        self.report(machine, "calendar service", "external.committed", attempt, **settled)
        return response

    def exhausted(self, machine: InvocationMachine, attempts: int) -> None:
        """The budget is spent: FAILED after "not committed"; after an unresolved OUTCOME_UNKNOWN stay
        there and say which key to query (the event may exist)."""
        spent = {"attempts": attempts, "retry_budget": self.retry_budget}
        if machine.state is not State.OUTCOME_UNKNOWN:
            self._enter(machine, State.FAILED, "executor", "retry.exhausted", None, **spent, side_effect=False)
            return
        key = machine.journal.entry(machine.invocation_id).idempotency_key if machine.journal else None
        unknown = {"side_effect": "unknown", "query_with": key or self.key(attempts)}
        self.report(machine, "executor", "retry.exhausted", None, **spent, **unknown)
