"""The external calendar: its own store, its own clock, its own idempotency table (§7.13).

``CalendarService.create_event`` is the commit boundary: when it returns an event ID the
event exists.  Idempotency follows the payment APIs' rules:

* same key, same request digest  → the stored result again; nothing executes a second time;
* same key, different digest     → ``IdempotencyConflict``; nothing executes;
* stored results: committed events and deterministic refusals (unknown tool version, wrong
  scope) — a retry would get the same answer, so it gets the stored one.  Transient
  failures ("not committed", "unavailable") are *not* stored: the request never began
  executing, so a retry with the same key may execute it.

Event IDs come from the service's own counter written in base 36 (the fixture's counter
starts at 8498 = "6K2"); ``committed_at`` from its own clock, which ticks once per request.

``ServiceTransport`` sits between the runtime and the service and plays a per-attempt
plan of network outcomes: ``deliver``, ``not_committed`` (the service answers explicitly
that it did not commit), ``unavailable`` (same, because it is down), ``lose_response``
(the service commits, the answer never arrives: ``TransportTimeout``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

TOOL_VERSION = "calendar.create_event@v1"
FIRST_EVENT_NUMBER = 8498          # base 36 "6K2"
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
OUTCOMES = ("deliver", "not_committed", "unavailable", "lose_response")


def base36(number: int) -> str:
    if number < 0:
        raise ValueError(f"number must be >= 0, got {number}")
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = ALPHABET[rest] + digits
        if not number:
            return digits


class IdempotencyConflict(ValueError):
    """The key was used before with another request digest: refused, nothing executed."""


class TransportTimeout(TimeoutError):
    """No response arrived; whether the service committed is unknown to the caller."""


@dataclass(frozen=True)
class CreateRequest:
    idempotency_key: str
    request_digest: str
    scope: str
    tool_version: str
    normalized_arguments: dict = field(hash=False)


@dataclass
class CalendarService:
    """A simulated external calendar with durable-in-memory store and idempotency table."""

    clock_start: str
    first_event_number: int = FIRST_EVENT_NUMBER
    tick_seconds: int = 1
    scopes: tuple[str, ...] = ("user-42/primary",)
    store: dict[str, dict] = field(default_factory=dict)
    idempotency: dict[str, dict] = field(default_factory=dict)
    executions: int = 0
    requests: int = 0

    def now(self) -> str:
        start = datetime.fromisoformat(self.clock_start)
        return (start + timedelta(seconds=self.tick_seconds * max(self.requests - 1, 0))).isoformat()

    def create_event(self, request: CreateRequest, *, commit: bool = True) -> dict:
        """Execute (or replay) one create request; ``commit=False`` answers "not committed"."""
        self.requests += 1
        stored = self.idempotency.get(request.idempotency_key)
        if stored is not None:
            if stored["request_digest"] != request.request_digest:
                raise IdempotencyConflict(
                    f"idempotency key {request.idempotency_key!r} was used with digest "
                    f"{stored['request_digest'][:19]}…, this request has {request.request_digest[:19]}…"
                )
            return {**stored["response"], "replayed": True}
        if request.tool_version != TOOL_VERSION:
            return self._remember(request, {"status": "error", "code": "unknown_tool_version",
                                            "detail": f"expected {TOOL_VERSION}, got {request.tool_version}"})
        if request.scope not in self.scopes:
            return self._remember(request, {"status": "error", "code": "unknown_scope",
                                            "detail": f"scope {request.scope!r} is not served"})
        if not commit:
            return {"status": "not_committed", "committed": False}
        self.executions += 1
        event_id = "evt_" + base36(self.first_event_number + len(self.store))
        response = {"status": "ok", "event_id": event_id, "committed_at": self.now(),
                    "start": request.normalized_arguments["start"]}
        self.store[event_id] = {"event_id": event_id, "scope": request.scope,
                                "idempotency_key": request.idempotency_key,
                                **request.normalized_arguments}
        return self._remember(request, response)

    def _remember(self, request: CreateRequest, response: dict) -> dict:
        self.idempotency[request.idempotency_key] = {"request_digest": request.request_digest,
                                                     "response": dict(response)}
        return dict(response)

    def lookup(self, idempotency_key: str) -> dict | None:
        """The stored result for a key, or None if nothing was stored under it."""
        stored = self.idempotency.get(idempotency_key)
        return None if stored is None else dict(stored["response"])

    def events_with_key(self, idempotency_key: str) -> list[str]:
        return [e for e, rec in self.store.items() if rec["idempotency_key"] == idempotency_key]


@dataclass
class ServiceTransport:
    """Delivers requests to the service following ``plan`` (one outcome per attempt)."""

    service: CalendarService
    plan: tuple[str, ...] = ()
    sent: int = 0

    def __post_init__(self):
        bad = [o for o in self.plan if o not in OUTCOMES]
        if bad:
            raise ValueError(f"transport plan outcomes must be in {list(OUTCOMES)}, got {bad}")

    def send(self, request: CreateRequest) -> dict:
        outcome = self.plan[self.sent] if self.sent < len(self.plan) else "deliver"
        self.sent += 1
        if outcome == "unavailable":
            self.service.requests += 1
            return {"status": "unavailable", "committed": False}
        if outcome == "not_committed":
            return self.service.create_event(request, commit=False)
        response = self.service.create_event(request)
        if outcome == "lose_response":
            raise TransportTimeout(f"no response to {request.idempotency_key} (attempt {self.sent})")
        return response

    def query(self, idempotency_key: str) -> dict | None:
        return self.service.lookup(idempotency_key)
