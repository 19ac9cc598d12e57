"""The durable journal of Invocation state transitions (a ``labkit.tools.store.Store`` of kind ``JOURNAL``).

Every transition is written **before** the side effect it authorises (``→ EXECUTING`` and its key commit
before the request leaves).  Nothing read back is trusted: ``journal_problems`` checks every row and path
at open, the readers each row again, and ``check_against`` refuses a calendar store that contradicts it.
"""

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from labkit.core import strictjson
from labkit.core.guards import is_integer
from labkit.tools.states import COMMITTED, TRANSITIONS, State
from labkit.tools.store import IDEMPOTENCY_KEY, SHA256, Store, StoreError, StoreKind, json_object, problem_with

SCHEMA_VERSION = 1  # PRAGMA user_version of a journal file this module reads and writes
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


def _format(value, pattern, what: str) -> list[str]:
    ok = value is None or (isinstance(value, str) and pattern.fullmatch(value) is not None)
    return problem_with(value, f"{what} must be None or match {pattern.pattern}", ok)


def row_problems(row: tuple) -> list[str]:
    """What is wrong with one ``invocations`` row (its columns in SCHEMA's order); [] when nothing."""
    invocation_id, invocation_json, approved, key, request_digest, budget, attempts, state = row
    where = f"invocation {invocation_id!r}"
    invocation, problems = json_object(invocation_json, f"{where}'s invocation_json")
    if invocation is not None and invocation.get("invocation_id") != invocation_id:
        problems.append(f"{where}'s invocation_json names {invocation.get('invocation_id')!r}")
    problems += problem_with(state, f"{where}: state must be one of the machine's", state in set(State))
    problems += problem_with(
        budget, f"{where}: retry_budget must be an integer >= 1", is_integer(budget) and budget >= 1
    )
    good = is_integer(attempts) and is_integer(budget) and 0 <= attempts <= budget
    problems += problem_with(attempts, f"{where}: attempts must be an integer in [0, retry_budget]", good)
    for value, pattern, column in ((approved, SHA256, "approved_digest"), (request_digest, SHA256, "request_digest")):
        problems += _format(value, pattern, f"{where}: {column}")
    problems += _format(key, IDEMPOTENCY_KEY, f"{where}: idempotency_key")
    sent = key is not None and IDEMPOTENCY_KEY.fullmatch(str(key)) and is_integer(attempts)
    if sent and not 1 <= int(key.rsplit(":", 1)[1]) <= attempts:
        problems.append(f"{where}: idempotency_key {key!r} names an attempt beyond the {attempts} made")
    if (key is None) != (request_digest is None):
        problems.append(f"{where}: an idempotency_key is journaled with its request_digest, got only one")
    return problems


def path_problems(entries: dict[str, tuple], moves: list[tuple]) -> list[str]:
    """Every transition belongs to an invocation, names known states, chains from the one before, is a legal
    move and carries a JSON object; each path ends in its row's state; the row's key is its last send's."""
    problems, paths = [], defaultdict(list)
    for seq, invocation_id, before, after, _, detail_json in moves:
        where = f"transition {seq} of {invocation_id!r}"
        detail, bad = json_object(detail_json, f"{where}'s detail_json")
        problems += bad + problem_with(
            invocation_id, f"{where}: the invocation must be in the journal", invocation_id in entries
        )
        legal = before in set(State) and after in set(State) and State(after) in TRANSITIONS.get(State(before), ())
        if not legal:
            problems.append(f"{where}: {before!r} → {after!r} is not a move of the state machine")
        elif paths[invocation_id] and paths[invocation_id][-1][0] != before:
            problems.append(f"{where} starts from {before}, the move before it ended in {paths[invocation_id][-1][0]}")
        paths[invocation_id].append((after, detail or {}))
    for invocation_id, path in paths.items():
        row = entries.get(invocation_id)
        if row is not None and path[-1][0] != row[7]:
            problems.append(f"invocation {invocation_id!r} is {row[7]} but its last move went to {path[-1][0]}")
        sent = [detail.get("idempotency_key") for after, detail in path if after == State.EXECUTING.value]
        if row is not None and sent[-1:] != ([row[3]] if row[3] is not None else []):
            problems.append(
                f"invocation {invocation_id!r} holds key {row[3]!r}, its last move to EXECUTING sent {sent[-1:]}"
            )
    return problems


def journal_problems(db: sqlite3.Connection, path: str) -> list[str]:
    """Every row and every path of an existing journal file (run at open)."""
    entries = {row[0]: row for row in db.execute("SELECT * FROM invocations")}
    problems = [p for row in entries.values() for p in row_problems(row)]
    return problems + path_problems(entries, db.execute("SELECT * FROM transitions ORDER BY seq").fetchall())


JOURNAL = StoreKind("journal", SCHEMA, SCHEMA_VERSION, 0x4C4B4A31, JournalError, journal_problems)  # "LKJ1"


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

    def __init__(self, path: str | Path = ":memory:", timeout: float = 5.0, *, create: bool = True):
        self.path = str(path)
        self.db = Store(self.path, JOURNAL, timeout, create=create)

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
        problems = row_problems(row)
        if problems:
            raise self.db.refuse("holds a row it cannot trust", problems)
        return JournalEntry(row[0], strictjson.loads(row[1], "journal"), *row[2:])  # the columns in SCHEMA's order

    def entries(self) -> list[JournalEntry]:
        ids = [r[0] for r in self.db.execute("SELECT invocation_id FROM invocations ORDER BY invocation_id")]
        return [self.entry(i) for i in ids]

    def committed_result(self, invocation_id: str) -> dict | None:
        """The result recorded with the move to COMMITTED (status, event_id, committed_at, start)."""
        committed = "SELECT detail_json FROM transitions WHERE invocation_id = ? AND to_state = 'COMMITTED'"
        row = self.db.execute(committed + " ORDER BY seq DESC LIMIT 1", (invocation_id,)).fetchone()
        if row is None:
            return None
        result, problems = json_object(row[0], f"the commit of {invocation_id!r}")
        if result is not None and not isinstance(result.get("event_id"), str):
            problems = [f"the commit of {invocation_id!r} names no event_id, got {row[0][:60]!r}"]
        if problems:
            raise self.db.refuse("holds a commit it cannot trust", problems)
        return result

    def transitions(self, invocation_id: str) -> list[tuple[str, str, str | None]]:
        sql = "SELECT from_state, to_state, event_id FROM transitions WHERE invocation_id = ? ORDER BY seq"
        moves = [tuple(r) for r in self.db.execute(sql, (invocation_id,))]
        bad = [f"{a!r} → {b!r}" for a, b, _ in moves if a not in set(State) or b not in set(State)]
        if bad:
            raise self.db.refuse(f"holds transitions of {invocation_id!r} with unknown states", bad)
        return moves

    def sent_keys(self, invocation_id: str) -> set[str]:
        """Every idempotency key a move of this invocation to EXECUTING sent."""
        sql = "SELECT detail_json FROM transitions WHERE invocation_id = ? AND to_state = 'EXECUTING'"
        details = [json_object(r[0], "a move to EXECUTING")[0] or {} for r in self.db.execute(sql, (invocation_id,))]
        return {d["idempotency_key"] for d in details if isinstance(d.get("idempotency_key"), str)}

    def check_against(self, service) -> None:
        """Refuse a calendar store that does not hold a commit of this journal under its keys, or holds an event
        under one of its keys' stems (``<request_id>:create-event:``) that no move to EXECUTING sent."""
        by_key = defaultdict(list)
        for event_id, record in service.store.items():
            by_key[record.get("idempotency_key")].append(event_id)
        problems = []
        for entry in self.entries():
            keys = self.sent_keys(entry.invocation_id)
            held = sorted(e for k in keys for e in by_key.get(k, []))
            if entry.state in COMMITTED:
                event = (self.committed_result(entry.invocation_id) or {}).get("event_id")
                if event not in held:
                    problems.append(f"{entry.invocation_id} committed {event}, the calendar holds {held}")
            stems = {k.rsplit(":", 1)[0] + ":" for k in keys}
            unsent = sorted(k for k in by_key if k and k not in keys and any(k.startswith(s) for s in stems))
            problems += [
                f"{entry.invocation_id}: events {by_key[k]} under key {k!r}, which it never sent" for k in unsent
            ]
        if problems:
            raise self.db.kind.error(
                f"journal {self.path} and calendar store {service.path} disagree: {'; '.join(problems[:3])}; "
                f"restore both from the same moment (with their -journal files), or reconcile them by hand"
            )
