"""A durable journal of Invocation state transitions (SQLite from the standard library).

The runtime writes every transition **before** the side effect it authorises: ``PREPARED → EXECUTING``
(with the idempotency key and request digest) is committed before the request leaves for the calendar
service, and after a crash ``labkit.tools.recovery`` reads the journal back.  The tables are ``SCHEMA``.
A file path survives the process (what a real crash needs), ``":memory:"`` does not (for fast property
tests).  A journal file is a ``labkit.tools.store.Store`` of kind ``JOURNAL``; its errors are ``JournalError``s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from labkit.core import strictjson
from labkit.tools.store import Store, StoreError, StoreKind

#: ``PRAGMA user_version`` of a journal file this module reads and writes
SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS invocations (
    invocation_id   TEXT PRIMARY KEY,
    invocation_json TEXT NOT NULL,
    approved_digest TEXT,
    idempotency_key TEXT,
    request_digest  TEXT,
    retry_budget    INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS transitions (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    invocation_id TEXT NOT NULL REFERENCES invocations(invocation_id),
    from_state    TEXT NOT NULL,
    to_state      TEXT NOT NULL,
    event_id      TEXT,
    detail_json   TEXT NOT NULL
);
"""


STATE_OF = "SELECT state FROM invocations WHERE invocation_id = ?"


class JournalError(StoreError):
    """The journal file cannot be used (the message names it and what to do)."""


JOURNAL = StoreKind("journal", SCHEMA, SCHEMA_VERSION, 0x4C4B4A31, JournalError)  # application_id "LKJ1"


@dataclass(frozen=True)
class JournalEntry:
    invocation_id: str
    invocation: dict
    approved_digest: str | None
    idempotency_key: str | None
    request_digest: str | None
    retry_budget: int
    attempts: int
    state: str


class Journal:
    """The runtime's durable memory of what it has decided and what it has sent."""

    def __init__(self, path: str | Path = ":memory:", timeout: float = 5.0):
        self.path = str(path)
        self.db = Store(self.path, JOURNAL, timeout)

    def close(self) -> None:
        self.db.close()

    def open_invocation(self, invocation: dict, state: str, retry_budget: int) -> None:
        known = self.db.execute(STATE_OF, (invocation["invocation_id"],)).fetchone()
        if known is not None:
            raise ValueError(
                f"invocation {invocation['invocation_id']!r} is already in the journal {self.path} "
                f"(state {known[0]}); recover it or use a fresh journal"
            )
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO invocations (invocation_id, invocation_json, retry_budget, state) VALUES (?, ?, ?, ?)",
                (invocation["invocation_id"], json.dumps(invocation, ensure_ascii=False), retry_budget, state),
            )

    def update(self, invocation_id: str, **fields) -> None:
        allowed = {"approved_digest", "idempotency_key", "request_digest", "attempts"}
        bad = sorted(set(fields) - allowed)
        if bad:
            raise ValueError(f"journal fields {bad} cannot be updated; expected some of {sorted(allowed)}")
        with self.db.transaction():
            for name, value in fields.items():
                self.db.execute(f"UPDATE invocations SET {name} = ? WHERE invocation_id = ?", (value, invocation_id))

    def record(
        self,
        invocation_id: str,
        from_state: str,
        to_state: str,
        event_id: str | None = None,
        detail: dict | None = None,
    ) -> None:
        """Append one transition and set the current state, in one SQLite transaction."""
        with self.db.transaction():
            found = self.db.execute(STATE_OF, (invocation_id,)).fetchone()
            if found is None:
                raise ValueError(f"invocation {invocation_id!r} is not in the journal")
            if found[0] != from_state:
                raise ValueError(f"journal says {invocation_id} is {found[0]}, the runtime moves from {from_state}")
            self.db.execute(
                "INSERT INTO transitions (invocation_id, from_state, to_state, event_id, detail_json) "
                "VALUES (?, ?, ?, ?, ?)",
                (invocation_id, from_state, to_state, event_id, json.dumps(detail or {}, ensure_ascii=False)),
            )
            self.db.execute("UPDATE invocations SET state = ? WHERE invocation_id = ?", (to_state, invocation_id))

    def entry(self, invocation_id: str) -> JournalEntry:
        row = self.db.execute("SELECT * FROM invocations WHERE invocation_id = ?", (invocation_id,)).fetchone()
        if row is None:
            raise ValueError(f"invocation {invocation_id!r} is not in the journal")
        return JournalEntry(row[0], strictjson.loads(row[1], "journal"), *row[2:])  # the columns in SCHEMA's order

    def entries(self) -> list[JournalEntry]:
        ids = [r[0] for r in self.db.execute("SELECT invocation_id FROM invocations ORDER BY invocation_id")]
        return [self.entry(i) for i in ids]

    def committed_result(self, invocation_id: str) -> dict | None:
        """The result recorded with the move to COMMITTED (status, event_id, committed_at, start)."""
        committed = "SELECT detail_json FROM transitions WHERE invocation_id = ? AND to_state = 'COMMITTED'"
        row = self.db.execute(committed + " ORDER BY seq DESC LIMIT 1", (invocation_id,)).fetchone()
        return None if row is None else strictjson.loads(row[0], "journal")

    def transitions(self, invocation_id: str) -> list[tuple[str, str, str | None]]:
        sql = "SELECT from_state, to_state, event_id FROM transitions WHERE invocation_id = ? ORDER BY seq"
        return [tuple(r) for r in self.db.execute(sql, (invocation_id,))]
