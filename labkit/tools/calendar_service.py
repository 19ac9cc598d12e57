"""The external calendar: its own store, its own clock, its own idempotency table (§7.13).

``create_event`` is the commit boundary; ``idempotent_execute`` follows the payment APIs' rules (same key
and digest → the stored result; another digest → ``IdempotencyConflict``).  Commits and deterministic
refusals are stored, transient failures are not.  A key's lookup and first execution share one
``BEGIN IMMEDIATE`` transaction (racing clients cannot both find it free); an event is written with its
idempotency row.  ``ServiceTransport`` plays planned network outcomes; an answer names its request
(``reply_to``), so a stale duplicate is dropped.  Nothing read back is trusted (``calendar_problems`` at
open, ``stored``/``store`` per row): half a commit or a flipped bit is refused, never believed.
"""

import json
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from labkit.tools.store import SERVICE_KEY, SHA256, Store, StoreError, StoreKind, json_object, problem_with

TOOL_VERSION = "calendar.create_event@v1"
FIRST_EVENT_NUMBER = 8498  # base 36 "6K2"
SCOPES = ("user-42/primary",)  # the calendars this service serves
OUTCOMES = (
    "deliver",
    "not_committed",  # the service answers explicitly that it did not commit
    "unavailable",  # the same, because it is down
    "lose_response",  # the service commits, the answer never arrives: TransportTimeout
    "lose_request",  # the request never arrives: also TransportTimeout, but nothing committed
    "duplicate_request",  # the network delivers the request twice; the second is a replay
    "duplicate_response",  # the service commits and its answer arrives twice
    "not_committed_duplicated",  # the "not committed" answer arrives twice
)
QUERY_OUTCOMES = ("answer", "unavailable")
EVENT_ID = re.compile(r"evt_[0-9A-Z]{1,12}")
STATUSES = ("ok", "error")  # what a stored response may say ("not committed" is never stored)
SERVICE_SCHEMA_VERSION = 1  # PRAGMA user_version of a calendar store file
SERVICE_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL,
                                   record_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, request_digest TEXT NOT NULL,
                                        response_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class CalendarStoreError(StoreError):
    """The calendar's store file cannot be used (the message names it and what to do)."""


def record_problems(key, request_digest, response_json) -> tuple[dict | None, list[str]]:
    """(the stored response, problems) of one ``idempotency`` row."""
    where = f"the stored response of key {key!r}"
    printable = isinstance(key, str) and SERVICE_KEY.fullmatch(key) is not None
    problems = problem_with(
        key, f"an idempotency key must be printable ASCII without spaces ({SERVICE_KEY.pattern})", printable
    )
    good = isinstance(request_digest, str) and SHA256.fullmatch(request_digest) is not None
    problems += problem_with(request_digest, f"the request digest of key {key!r} must match {SHA256.pattern}", good)
    response, bad = json_object(response_json, where)
    if response is not None and response.get("status") not in STATUSES:
        bad.append(f"{where} must have a status in {list(STATUSES)}, got {response.get('status')!r}")
    return response, problems + bad


def event_record(event_id, key, record_json) -> tuple[dict | None, list[str]]:
    """(the record, problems) of one ``events`` row: a JSON object naming its own event ID and key."""
    record, problems = json_object(record_json, f"event {event_id!r}'s record_json")
    if record is not None and (record.get("event_id"), record.get("idempotency_key")) != (event_id, key):
        named = f"{record.get('event_id')!r}, key {record.get('idempotency_key')!r}"
        problems.append(f"event {event_id!r} under key {key!r} holds a record of {named}")
    return record, problems


def event_problems(event_id, key, record_json, responses: dict) -> list[str]:
    """One ``events`` row against the key's stored response (``responses``: key → response)."""
    problems = event_record(event_id, key, record_json)[1]
    good = isinstance(event_id, str) and EVENT_ID.fullmatch(event_id) is not None
    problems += problem_with(event_id, f"an event ID must match {EVENT_ID.pattern}", good)
    answer = responses.get(key) or {}
    if (answer.get("status"), answer.get("event_id")) != ("ok", event_id):
        where = f"event {event_id!r} under key {key!r}"
        problems.append(f"{where}: the key's stored response is {answer or None} (half a commit?)")
    return problems


def calendar_problems(db: sqlite3.Connection, path: str) -> list[str]:
    """Every row of an existing calendar store, each event against its key's record (run at open)."""
    responses, problems = {}, []
    for key, request_digest, response_json in db.execute("SELECT * FROM idempotency"):
        responses[key], bad = record_problems(key, request_digest, response_json)
        problems += bad
    events = db.execute("SELECT * FROM events").fetchall()
    for event_id, key, record_json in events:
        problems += event_problems(event_id, key, record_json, responses)
    held = {event_id for event_id, _, _ in events}
    for key, response in responses.items():
        if response and response.get("status") == "ok" and response.get("event_id") not in held:
            problems.append(f"key {key!r} says it committed {response.get('event_id')!r}, which no event row holds")
    counters = dict(db.execute("SELECT name, value FROM counters"))
    if counters and counters.get("executions") != len(events):  # a store with no counters rows is not checked
        problems.append(
            f"the executions counter says {counters.get('executions')!r}, the store holds {len(events)} events"
        )
    return problems


CALENDAR_STORE = StoreKind(
    "calendar store", SERVICE_SCHEMA, SERVICE_SCHEMA_VERSION, 0x4C4B4331, CalendarStoreError, calendar_problems
)


def base36(number: int) -> str:
    """An event number (FIRST_EVENT_NUMBER plus the events stored, never negative) in base 36."""
    return np.base_repr(number, 36)


class IdempotencyConflict(ValueError):
    """The key was used before with another request digest: refused, nothing executed."""


class TransportTimeout(TimeoutError):
    """No response arrived; whether the service committed is unknown to the caller."""


class QueryUnavailable(ConnectionError):
    """The lookup by key could not be made; the outcome stays unknown."""


@dataclass(frozen=True)
class CreateRequest:
    idempotency_key: str
    request_digest: str
    scope: str
    tool_version: str
    normalized_arguments: dict = field(hash=False)
    attempt: int = 1

    @property
    def ref(self) -> str:
        """What an answer to this request names in ``reply_to``."""
        return f"{self.idempotency_key}#{self.attempt}"


class CalendarService:
    """A simulated external calendar whose SQLite store is ":memory:" or a file (which survives a crash)."""

    def __init__(
        self, clock_start: str, path: str = ":memory:", execute=None, timeout: float = 5.0, *, create: bool = True
    ):
        self.clock_start, self.path = datetime.fromisoformat(clock_start), str(path)  # a bad clock fails first
        self.execute = execute or idempotent_execute  # (desk, key, request_digest, request) -> response
        self.db = Store(self.path, CALENDAR_STORE, timeout, create=create)
        with self.db.transaction():
            self.db.execute("INSERT OR IGNORE INTO counters VALUES ('requests', 0), ('executions', 0)")

    def _counter(self, name: str) -> int:
        return self.db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0]

    @property
    def requests(self) -> int:
        return self._counter("requests")

    @property
    def executions(self) -> int:
        return self._counter("executions")

    def tick(self) -> None:
        """One request arrived (the service clock advances per request)."""
        with self.db.transaction():
            self.db.execute("UPDATE counters SET value = value + 1 WHERE name = 'requests'")

    @property
    def store(self) -> dict[str, dict]:
        """event ID → its record, each checked against its row as it is read."""
        found = {}
        for event_id, key, record_json in self.db.execute("SELECT * FROM events ORDER BY event_id"):
            record, problems = event_record(event_id, key, record_json)
            if problems:
                raise self.db.refuse("holds an event it cannot trust", problems)
            found[event_id] = record
        return found

    def now(self) -> str:
        return (self.clock_start + timedelta(seconds=max(self.requests - 1, 0))).isoformat()

    def create_event(self, request: CreateRequest, *, commit: bool = True) -> dict:
        """Execute or replay one request as ``self.execute`` decides; ``commit=False``: "not committed"."""
        self.tick()
        with self.db.transaction():  # the key's lookup and its first execution: one transaction
            response = self.execute(ServiceDesk(self, commit), request.idempotency_key, request.request_digest, request)
        if not isinstance(response, dict) or "status" not in response:
            raise TypeError(f"the service's execute must return a response dict with a 'status', got {response!r}")
        return response

    def perform(self, request: CreateRequest, *, commit: bool = True) -> dict:
        """A first execution (no lookup): a refusal or a commit is stored under the key, "not committed" is not."""
        refused = _refusal(request)
        if refused:
            return self._remember(request, {"status": "error", "code": refused[0], "detail": refused[1]})
        if not commit:
            return {"status": "not_committed", "committed": False}
        with self.db.transaction():  # event + idempotency record: one transaction
            count = self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
            event_id = "evt_" + base36(FIRST_EVENT_NUMBER + count)
            start = request.normalized_arguments["start"]
            response = {"status": "ok", "event_id": event_id, "committed_at": self.now(), "start": start}
            record = {"event_id": event_id, "scope": request.scope, "idempotency_key": request.idempotency_key}
            record_json = json.dumps({**record, **request.normalized_arguments}, ensure_ascii=False)
            self.db.execute("INSERT INTO events VALUES (?, ?, ?)", (event_id, request.idempotency_key, record_json))
            self.db.execute("UPDATE counters SET value = value + 1 WHERE name = 'executions'")
            return self._remember(request, response)

    def _remember(self, request: CreateRequest, response: dict) -> dict:
        with self.db.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO idempotency VALUES (?, ?, ?)",
                (request.idempotency_key, request.request_digest, json.dumps(response)),
            )
        return dict(response)

    def stored(self, idempotency_key: str) -> dict | None:
        """The idempotency record of a key: {"request_digest", "response"}, or None."""
        sql = "SELECT request_digest, response_json FROM idempotency WHERE key = ?"
        row = self.db.execute(sql, (idempotency_key,)).fetchone()
        if row is None:
            return None
        response, problems = record_problems(idempotency_key, *row)
        if problems:
            raise self.db.refuse("holds an idempotency record it cannot trust", problems)
        return {"request_digest": row[0], "response": response}

    def events_with_key(self, idempotency_key: str) -> list[str]:
        sql = "SELECT event_id FROM events WHERE idempotency_key = ? ORDER BY event_id"
        return [row[0] for row in self.db.execute(sql, (idempotency_key,))]


def _refusal(request: CreateRequest) -> tuple[str, str] | None:
    """(code, detail) of a refusal the service stores (no local time is guessed for a start), or None."""
    title, start = request.normalized_arguments.get("title"), request.normalized_arguments.get("start")
    if request.tool_version != TOOL_VERSION:
        return "unknown_tool_version", f"expected {TOOL_VERSION}, got {request.tool_version}"
    if request.scope not in SCOPES:
        return "unknown_scope", f"scope {request.scope!r} is not served"
    if not isinstance(title, str) or not title.strip():
        return "invalid_arguments", f"title must be a non-blank text, got {title!r}"
    try:
        aware = datetime.fromisoformat(start).utcoffset() is not None
    except (TypeError, ValueError):
        aware = False
    offset = "start must be an RFC 3339 date-time with its UTC offset (no local time is guessed)"
    return None if aware else ("invalid_arguments", f"{offset}, got {start!r}")


class ServiceDesk:
    """What an idempotent execute may use for one request: ``stored(key)`` → {"request_digest", "response"}
    or None; ``perform(request)`` → the response of its first execution (``CalendarService.perform``)."""

    def __init__(self, service: CalendarService, commit: bool):
        self._service, self._commit = service, commit
        self.performed = 0  # how often ``perform`` was asked for (page 10's exercise checks it)

    def stored(self, idempotency_key: str) -> dict | None:
        return self._service.stored(idempotency_key)

    def perform(self, request: CreateRequest) -> dict:
        self.performed += 1
        return self._service.perform(request, commit=self._commit)

    def __repr__(self) -> str:
        return "ServiceDesk(stored(key), perform(request))"


def idempotent_execute(desk: ServiceDesk, key: str, request_digest: str, request: CreateRequest) -> dict:
    """Same key + same digest → the stored result; same key + another digest → conflict; new key → perform."""
    record = desk.stored(key)
    if record is None:
        return desk.perform(request)
    if record["request_digest"] != request_digest:
        raise IdempotencyConflict(
            f"idempotency key {key!r} was used with digest {record['request_digest'][:19]}…, "
            f"this request has {request_digest[:19]}…"
        )
    return {**record["response"], "replayed": True}


@dataclass
class ServiceTransport:
    """Delivers each request and query as ``plan`` and ``query_plan`` say; answers wait in ``inbox``."""

    service: CalendarService
    plan: tuple[str, ...] = ()
    query_plan: tuple[str, ...] = ()
    sent: int = 0
    queries: int = 0
    inbox: list = field(default_factory=list)

    def __post_init__(self):
        for what, plan, known in (("transport", self.plan, OUTCOMES), ("query", self.query_plan, QUERY_OUTCOMES)):
            bad = [o for o in plan if o not in known]
            if bad:
                raise ValueError(f"{what} plan outcomes must be in {list(known)}, got {bad}")

    def send(self, request: CreateRequest) -> dict:
        """Send one request; return the first answer that arrives (maybe a stale duplicate)."""
        outcome = self.plan[self.sent] if self.sent < len(self.plan) else "deliver"
        self.sent += 1
        if outcome == "unavailable":
            self.service.tick()
            return self._arrive(request, {"status": "unavailable", "committed": False})
        if outcome == "lose_request":
            raise TransportTimeout(f"{request.idempotency_key} never reached the service (attempt {self.sent})")
        if outcome == "duplicate_request":
            self.service.create_event(request)  # the network delivers the request twice
        response = self.service.create_event(request, commit=not outcome.startswith("not_committed"))
        if outcome == "lose_response":
            raise TransportTimeout(f"no response to {request.idempotency_key} (attempt {self.sent})")
        copies = 2 if outcome in ("duplicate_response", "not_committed_duplicated") else 1
        return self._arrive(request, response, copies)

    def _arrive(self, request: CreateRequest, response: dict, copies: int = 1) -> dict:
        self.inbox += [{**response, "reply_to": request.ref} for _ in range(copies)]
        return self.receive()

    def receive(self) -> dict:
        """The next answer in arrival order; ``TransportTimeout`` when none is waiting."""
        if not self.inbox:
            raise TransportTimeout("no answer is waiting")
        return self.inbox.pop(0)

    def query(self, idempotency_key: str) -> dict | None:
        outcome = self.query_plan[self.queries] if self.queries < len(self.query_plan) else "answer"
        self.queries += 1
        if outcome == "unavailable":
            raise QueryUnavailable(f"the lookup of {idempotency_key} failed (query {self.queries})")
        record = self.service.stored(idempotency_key)  # the stored result, or None: nothing stored under the key
        return None if record is None else record["response"]
