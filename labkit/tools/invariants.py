"""The promises of trace three's execute path, checked on what the store files hold.

``take(journals, service)`` opens the files (``read``: open connections, a fault schedule's in-memory
stores), letting SQLite roll back what a killed process left half done, and reads them with plain SQL —
none of the runtime's code — into a ``Snapshot`` of plain data.  Each invariant is a function of
snapshots returning its violations ([]: the promise held), checked by the crash harness after every kill
and at the end, by the racing clients, and by the fault schedules (``run_checks`` and ``ending``):
"""

import sqlite3
from collections import defaultdict
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from labkit.core import strictjson
from labkit.tools.confirm import invocation_digest
from labkit.tools.normalize import Invocation
from labkit.tools.states import COMMITTED, TERMINAL_OUTCOMES, TRANSITIONS, State

INVARIANTS = MappingProxyType(
    {
        "one_event_per_commit": "exactly one calendar event per approved invocation that reached COMMITTED",
        "no_event_without_commit": "no event for an invocation that did not reach COMMITTED",
        "events_authorised": "no event without a journal record that authorised it (checked at every kill)",
        "legal_path": "the journal's transitions form a legal path of the state machine",
        "unknown_settled": "every OUTCOME_UNKNOWN is settled by a later query, which executes nothing",
        "restart_queries_first": "a restart asks by key before sending for an invocation it finds "
        "EXECUTING or OUTCOME_UNKNOWN",
        "one_commit_per_key": "racing clients: one commit per key, the stored response to the same digest, "
        "a refusal to another",
        "integrity": "PRAGMA integrity_check is ok on every store file",
        "runtime_ran": "no incarnation ended in an unexpected error",
    }
)
__doc__ += "\n".join(f"\n* ``{name}``: {text}" for name, text in INVARIANTS.items())


def key_prefix(invocation_id: str) -> str:
    """What every idempotency key of this invocation starts with (``req-<id>:create-event:<n>``)."""
    return f"req-{invocation_id}:"


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


def take(journals: list[Path], service: Path) -> Snapshot:
    """The snapshot of the store files (each opened, integrity-checked and closed again)."""
    paths = [*journals, service]
    missing = [path for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"store file {missing[0]} does not exist")
    with ExitStack() as stack:
        dbs = [stack.enter_context(closing(sqlite3.connect(str(p), isolation_level=None, timeout=30.0))) for p in paths]
        return read(dbs[:-1], dbs[-1], [p.name for p in paths])


def _rows(db: sqlite3.Connection, sql: str, *json_columns: str) -> list[dict]:
    """The rows as dicts; each ``<name>_json`` column of ``json_columns`` parsed into ``<name>``."""
    cursor = db.execute(sql)
    rows = [dict(zip([column[0] for column in cursor.description], row, strict=True)) for row in cursor]
    for row in rows:
        row.update({c.removesuffix("_json"): strictjson.loads(row.pop(c), "store snapshot") for c in json_columns})
    return rows


def read(journals: list[sqlite3.Connection], service: sqlite3.Connection, names: list[str] | None = None) -> Snapshot:
    """The snapshot of open connections (``names``: the files', default journal-<n> and calendar)."""
    names = names or [f"journal-{n}" for n in range(len(journals))] + ["calendar"]
    snap = Snapshot()
    for name, db in zip(names, [*journals, service], strict=True):
        snap.integrity[name] = "; ".join(row[0] for row in db.execute("PRAGMA integrity_check"))
    for name, db in zip(names, journals, strict=False):
        for row in _rows(db, "SELECT * FROM invocations ORDER BY invocation_id", "invocation_json"):
            snap.entries[(name, row["invocation_id"])] = row
        moves = 'SELECT seq, invocation_id, from_state AS "from", to_state AS "to", detail_json FROM transitions'
        snap.transitions += [{"journal": name, **row} for row in _rows(db, moves + " ORDER BY seq", "detail_json")]
    snap.events = [tuple(r) for r in service.execute("SELECT event_id, idempotency_key FROM events ORDER BY event_id")]
    stored = _rows(service, "SELECT key, request_digest, response_json FROM idempotency", "response_json")
    snap.stored = {row.pop("key"): row for row in stored}
    counters = dict(service.execute("SELECT name, value FROM counters"))
    snap.executions, snap.requests = counters.get("executions", 0), counters.get("requests", 0)
    return snap


def integrity(snap: Snapshot) -> list[str]:
    return [f"{name}: integrity_check says {result}" for name, result in snap.integrity.items() if result != "ok"]


def legal_path(snap: Snapshot) -> list[str]:
    """Each invocation's moves chain, each is in ``TRANSITIONS``, and the last ends in the journaled state."""
    problems, paths = [], defaultdict(list)
    for t in snap.transitions:
        paths[(t["journal"], t["invocation_id"])].append(t)
    for (journal, inv), entry in snap.entries.items():
        path = paths.get((journal, inv), [])
        for before, after in zip(path, path[1:], strict=False):
            if before["to"] != after["from"]:
                problems.append(f"{inv}: the path breaks at seq {after['seq']} ({before['to']} then {after['from']})")
        for t in path:
            if State(t["to"]) not in TRANSITIONS.get(State(t["from"]), frozenset()):
                problems.append(f"{inv}: illegal move {t['from']} → {t['to']} at seq {t['seq']}")
        if path and path[-1]["to"] != entry["state"]:
            problems.append(f"{inv}: the journal's state {entry['state']} is not its last move's {path[-1]['to']}")
    return problems


def events_authorised(snap: Snapshot) -> list[str]:
    """Every event's key has a journaled move to EXECUTING, under an approval of the invocation's digest."""
    keys = set()
    for t in snap.transitions:
        entry = snap.entries[(t["journal"], t["invocation_id"])]
        approved = entry["approved_digest"]
        if t["to"] == State.EXECUTING.value and approved == invocation_digest(Invocation(**entry["invocation"])):
            keys.add(t["detail"].get("idempotency_key"))
    unauthorised = [(event, key) for event, key in snap.events if key not in keys]
    return [f"event {event} (key {key}) has no journal record that authorised it" for event, key in unauthorised]


def commits_have_one_event(snap: Snapshot) -> tuple[list[str], list[str]]:
    """(one_event_per_commit, no_event_without_commit): under a committed invocation's keys the one event its
    commit names; none under another's (OUTCOME_UNKNOWN may hold one: ``unknown_settled`` checks it)."""
    keys, results = defaultdict(set), defaultdict(list)  # (journal, invocation) → its attempts' keys, commits
    for t in snap.transitions:
        if t["to"] == State.EXECUTING.value:
            keys[(t["journal"], t["invocation_id"])].add(t["detail"].get("idempotency_key"))
        elif t["to"] == State.COMMITTED.value:
            results[(t["journal"], t["invocation_id"])].append(t["detail"].get("event_id"))
    one, none = [], []
    for (journal, inv), entry in snap.entries.items():
        mine = keys[(journal, inv)] | {entry["idempotency_key"]}
        events = sorted(e for e, key in snap.events if key in mine)
        if entry["state"] in COMMITTED:
            if len(events) != 1:
                one.append(f"{inv} is {entry['state']} with {len(events)} events: {events}")
            elif results[(journal, inv)][-1:] != events:
                one.append(f"{inv} committed {results[(journal, inv)][-1:]} but the calendar holds {events}")
        elif events and entry["state"] != State.OUTCOME_UNKNOWN.value:
            approved = entry["approved_digest"] is not None
            none.append(f"{inv} ended {entry['state']} (approved: {approved}) but the calendar holds {events}")
    return one, none


def _store_checks(snap: Snapshot) -> dict[str, list[str]]:
    return {"events_authorised": events_authorised(snap), "legal_path": legal_path(snap), "integrity": integrity(snap)}


def run_checks(snap: Snapshot) -> dict[str, list[str]]:
    """The promises any moment's stores keep, by name."""
    one, none = commits_have_one_event(snap)
    return {"one_event_per_commit": one, "no_event_without_commit": none, **_store_checks(snap)}


def ending(snap: Snapshot, outcome, approved: bool) -> list[str]:
    """A fault schedule's ending: documented, the journal's, and no request sent unless ``approved``."""
    problems, ended = [], (outcome.final_state, outcome.request_status)
    if ended not in TERMINAL_OUTCOMES:
        problems.append(f"undocumented ending {ended}")
    journaled = {row["state"] for row in snap.entries.values()}
    if journaled != {outcome.final_state}:
        problems.append(f"journal says {sorted(journaled)}, the runtime ended in {outcome.final_state}")
    if not approved and snap.requests:
        problems.append(f"{snap.requests} requests reached the service without authorisation/confirmation")
    return problems


def asked(ops: list[tuple[str, str]], invocation_id: str) -> list[str]:
    """What an incarnation did for one invocation, in order: "send" and "query"."""
    return [kind for kind, key in ops if key.startswith(key_prefix(invocation_id))]


def restart_queries_first(states_at_restart: dict[str, str], ops: list[tuple[str, str]]) -> list[str]:
    problems = []
    for inv, state in states_at_restart.items():
        mine = asked(ops, inv)
        if state in (State.EXECUTING.value, State.OUTCOME_UNKNOWN.value) and mine[:1] == ["send"]:
            problems.append(f"{inv} was {state} at the restart, which sent before asking: {mine}")
    return problems


def unknown_settled(before: Snapshot, after: Snapshot, ops: list[tuple[str, str]]) -> list[str]:
    problems = []
    for inv in [inv for inv, state in before.states().items() if state == State.OUTCOME_UNKNOWN.value]:
        state, did = after.states()[inv], asked(ops, inv)
        if state == State.OUTCOME_UNKNOWN.value or did[:1] != ["query"] or "send" in did:
            problems.append(f"{inv} was OUTCOME_UNKNOWN; the later restart did {did} and left it {state}")
    if after.executions != before.executions:
        problems.append(f"settling executed {after.executions - before.executions} request(s)")
    return problems


def one_commit_per_key(results: list[dict], snap: Snapshot) -> list[str]:
    """Per key: exactly one event and one execution; every request with the committed digest
    got that event, every request with another digest was refused (FAILED, no event)."""
    problems, by_key, events = [], defaultdict(list), defaultdict(list)
    for r in results:
        by_key[r["key"]].append(r)
    for event, key in snap.events:
        events[key].append(event)
    for key, requests in sorted(by_key.items()):
        mine = events[key]
        if len(mine) != 1:
            problems.append(f"key {key}: {len(mine)} events {mine} for {len(requests)} requests")
            continue
        committed = snap.stored.get(key, {}).get("request_digest")
        for r in requests:
            expected = ("COMMITTED", mine[0]) if r["request_digest"] == committed else ("FAILED", None)
            got = (r["state"], r["event_id"])
            if got != expected:
                problems.append(f"key {key}, client {r['client']}: got {got}, expected {expected}")
    if snap.executions != len(by_key):
        problems.append(f"{snap.executions} executions for {len(by_key)} keys")
    return problems


def race_checks(results: list[dict], errors: list[str], snap: Snapshot) -> dict[str, list[str]]:
    return {"runtime_ran": errors, "one_commit_per_key": one_commit_per_key(results, snap), **_store_checks(snap)}
