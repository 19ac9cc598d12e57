"""The calendar service's store: its schema, its kind, and the rules an existing file must keep.

``calendar_problems`` (run by ``labkit.tools.store.Store`` at open) trusts nothing it reads: each event
is one JSON object under an event ID of the service's form, held three times under one idempotency key
(its row, its record, the key's stored response), every stored response is a JSON object with a known
status, every key and digest has its format, and the ``executions`` counter counts the events — so half a
commit (a ``-journal`` lost after a kill) or a flipped bit is refused, never believed.
"""

from __future__ import annotations

import re
import sqlite3

from labkit.tools.store import SERVICE_KEY, SHA256, StoreError, StoreKind, json_object, problem_with

SERVICE_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL,
                                   record_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, request_digest TEXT NOT NULL,
                                        response_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
#: ``PRAGMA user_version`` of a calendar store file
SERVICE_SCHEMA_VERSION = 1


class CalendarStoreError(StoreError):
    """The calendar's store file cannot be used (the message names it and what to do); application_id "LKC1"."""


EVENT_ID = re.compile(r"evt_[0-9A-Z]{1,12}")
STATUSES = ("ok", "error")  # what a stored response may say ("not committed" is never stored)


def record_problems(key, request_digest, response_json) -> tuple[dict | None, list[str]]:
    """(the stored response, problems) of one ``idempotency`` row."""
    where = f"the stored response of key {key!r}"
    problems = problem_with(
        key,
        f"an idempotency key must be printable ASCII without spaces ({SERVICE_KEY.pattern})",
        isinstance(key, str) and SERVICE_KEY.fullmatch(key) is not None,
    )
    good = isinstance(request_digest, str) and SHA256.fullmatch(request_digest) is not None
    problems += problem_with(request_digest, f"the request digest of key {key!r} must match {SHA256.pattern}", good)
    response, bad = json_object(response_json, where)
    if response is not None and response.get("status") not in STATUSES:
        bad.append(f"{where} must have a status in {list(STATUSES)}, got {response.get('status')!r}")
    return response, problems + bad


def event_problems(event_id, key, record_json, responses: dict) -> list[str]:
    """One ``events`` row against the key's stored response (``responses``: key → response)."""
    where = f"event {event_id!r}"
    record, problems = json_object(record_json, f"{where}'s record_json")
    problems += problem_with(
        event_id,
        f"an event ID must match {EVENT_ID.pattern}",
        isinstance(event_id, str) and EVENT_ID.fullmatch(event_id) is not None,
    )
    if record is not None and (record.get("event_id"), record.get("idempotency_key")) != (event_id, key):
        problems.append(
            f"{where} under key {key!r} holds a record of {record.get('event_id')!r}, "
            f"key {record.get('idempotency_key')!r}"
        )
    answer = responses.get(key) or {}
    if (answer.get("status"), answer.get("event_id")) != ("ok", event_id):
        problems.append(f"{where} under key {key!r}: the key's stored response is {answer or None} (half a commit?)")
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
    if counters and counters.get("executions") != len(events):
        problems.append(
            f"the executions counter says {counters.get('executions')!r}, the store holds {len(events)} events"
        )
    return problems


CALENDAR_STORE = StoreKind(
    "calendar store", SERVICE_SCHEMA, SERVICE_SCHEMA_VERSION, 0x4C4B4331, CalendarStoreError, calendar_problems
)
