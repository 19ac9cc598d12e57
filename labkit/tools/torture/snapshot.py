"""What the store files hold, read by the harness (plain SQL, none of the runtime's code).

``take(journals, service)`` opens each file (``read`` takes open connections: the in-memory stores
of a fault schedule), lets SQLite roll back a transaction a killed
process left half done (what any restart does first), runs ``PRAGMA integrity_check`` and
reads the journal's invocations and transitions and the calendar's events and idempotency
records.  The result is plain data, so a check can be run on any moment of a run.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from labkit.core import strictjson


@dataclass
class Snapshot:
    integrity: dict[str, str] = field(default_factory=dict)  # file name → "ok" or the problems
    entries: dict[tuple[str, str], dict] = field(default_factory=dict)  # (journal, invocation) → row
    transitions: list[dict] = field(default_factory=list)  # in journal order
    events: list[tuple[str, str]] = field(default_factory=list)  # (event_id, idempotency key)
    stored: dict[str, dict] = field(default_factory=dict)  # key → {"request_digest", "response"}
    executions: int = 0
    requests: int = 0

    def states(self) -> dict[str, str]:
        """invocation ID → journaled state (for one journal)."""
        return {inv: row["state"] for (_, inv), row in self.entries.items()}

    def events_for(self, key_prefix: str) -> list[str]:
        return sorted(e for e, key in self.events if key.startswith(key_prefix))


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(f"store file {path} does not exist")
    return sqlite3.connect(str(path), isolation_level=None, timeout=30.0)


def _integrity(db: sqlite3.Connection) -> str:
    return "; ".join(row[0] for row in db.execute("PRAGMA integrity_check"))


def take(journals: list[Path], service: Path) -> Snapshot:
    """The snapshot of the store files (each opened, checked and closed again)."""
    dbs = [_connect(path) for path in [*journals, service]]
    try:
        return read(dbs[:-1], dbs[-1], [p.name for p in [*journals, service]])
    finally:
        for db in dbs:
            db.close()


def read(journals: list[sqlite3.Connection], service: sqlite3.Connection, names: list[str] | None = None) -> Snapshot:
    """The snapshot of open connections (``names``: the files', default journal-<n> and calendar)."""
    names = names or [f"journal-{n}" for n in range(len(journals))] + ["calendar"]
    snap = Snapshot()
    for name, db in zip(names, journals, strict=False):
        snap.integrity[name] = _integrity(db)
        for row in db.execute(
            "SELECT invocation_id, invocation_json, approved_digest, idempotency_key, "
            "retry_budget, attempts, state FROM invocations ORDER BY invocation_id"
        ):
            snap.entries[(name, row[0])] = {
                "invocation": strictjson.loads(row[1], "store snapshot"),
                "approved_digest": row[2],
                "idempotency_key": row[3],
                "retry_budget": row[4],
                "attempts": row[5],
                "state": row[6],
            }
        for seq, inv, a, b, detail in db.execute(
            "SELECT seq, invocation_id, from_state, to_state, detail_json FROM transitions ORDER BY seq"
        ):
            snap.transitions.append(
                {
                    "journal": name,
                    "seq": seq,
                    "invocation_id": inv,
                    "from": a,
                    "to": b,
                    "detail": strictjson.loads(detail, "store snapshot"),
                }
            )
    snap.integrity[names[-1]] = _integrity(service)
    snap.events = [tuple(r) for r in service.execute("SELECT event_id, idempotency_key FROM events ORDER BY event_id")]
    snap.stored = {
        k: {"request_digest": d, "response": strictjson.loads(r, "store snapshot")}
        for k, d, r in service.execute("SELECT key, request_digest, response_json FROM idempotency")
    }
    counters = dict(service.execute("SELECT name, value FROM counters"))
    snap.executions, snap.requests = counters.get("executions", 0), counters.get("requests", 0)
    return snap
