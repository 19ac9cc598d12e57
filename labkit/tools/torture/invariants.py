"""The promises of trace three's execute path, each a function of snapshots returning its violations.

The one set of invariants: the crash harness checks them on the files after every kill and at
the end, the fault schedules (``labkit.tools.schedules``) on their in-memory stores
(``run_checks`` and ``ending``).  An empty list means the promise held.  ``INVARIANTS`` names
them for the report:
"""

from __future__ import annotations

from collections import defaultdict

from labkit.tools.confirm import invocation_digest
from labkit.tools.normalize import Invocation
from labkit.tools.states import TRANSITIONS, State
from labkit.tools.torture.snapshot import Snapshot
from labkit.tools.torture.workload import owner_of

INVARIANTS = {
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
__doc__ += "\n".join(f"\n* ``{name}``: {text}" for name, text in INVARIANTS.items())
COMMITTED = (State.COMMITTED.value, State.OBSERVED.value)


def integrity(snap: Snapshot) -> list[str]:
    return [f"{name}: integrity_check says {result}" for name, result in snap.integrity.items() if result != "ok"]


def legal_path(snap: Snapshot) -> list[str]:
    """Each invocation's transitions chain (one's target is the next one's source), every move is
    allowed by ``TRANSITIONS`` and the last target is the journaled state."""
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


def authorised_keys(snap: Snapshot) -> set[str]:
    """Keys the journal recorded a move to EXECUTING for, under an approval of the invocation's digest."""
    keys = set()
    for t in snap.transitions:
        entry = snap.entries[(t["journal"], t["invocation_id"])]
        approved = entry["approved_digest"]
        if t["to"] == State.EXECUTING.value and approved == invocation_digest(Invocation(**entry["invocation"])):
            keys.add(t["detail"].get("idempotency_key"))
    return keys


def events_authorised(snap: Snapshot) -> list[str]:
    keys = authorised_keys(snap)
    return [
        f"event {event} (key {key}) has no journal record that authorised it"
        for event, key in snap.events
        if key not in keys
    ]


def keys_of(snap: Snapshot, journal: str, invocation_id: str) -> set[str]:
    """The idempotency keys the journal recorded for an invocation's attempts."""
    keys = {snap.entries[(journal, invocation_id)]["idempotency_key"]}
    keys |= {
        t["detail"].get("idempotency_key")
        for t in snap.transitions
        if (t["journal"], t["invocation_id"], t["to"]) == (journal, invocation_id, State.EXECUTING.value)
    }
    return keys - {None}


def commits_have_one_event(snap: Snapshot) -> tuple[list[str], list[str]]:
    """(one_event_per_commit, no_event_without_commit): the events under an invocation's journaled
    keys — exactly one, the one its COMMITTED move names, if it committed; none if it did not (an
    OUTCOME_UNKNOWN ending may hold its event: ``unknown_settled`` checks a later query finds it)."""
    one, none = [], []
    for (journal, inv), entry in snap.entries.items():
        keys = keys_of(snap, journal, inv)
        events = sorted(e for e, key in snap.events if key in keys)
        if entry["state"] in COMMITTED:
            results = [
                t["detail"].get("event_id")
                for t in snap.transitions
                if t["invocation_id"] == inv and t["to"] == State.COMMITTED.value
            ]
            if len(events) != 1:
                one.append(f"{inv} is {entry['state']} with {len(events)} events: {events}")
            elif results[-1:] != events:
                one.append(f"{inv} committed {results[-1:]} but the calendar holds {events}")
        elif events and entry["state"] != State.OUTCOME_UNKNOWN.value:
            none.append(
                f"{inv} ended {entry['state']} (approved: {entry['approved_digest'] is not None}) "
                f"but the calendar holds {events}"
            )
    return one, none


def run_checks(snap: Snapshot) -> dict[str, list[str]]:
    """The promises any moment's stores keep, by name."""
    one, none = commits_have_one_event(snap)
    return {
        "one_event_per_commit": one,
        "no_event_without_commit": none,
        "events_authorised": events_authorised(snap),
        "legal_path": legal_path(snap),
        "integrity": integrity(snap),
    }


def ending(snap: Snapshot, outcome, approved: bool) -> list[str]:
    """An in-process run's ending (a fault schedule's ``outcome``): documented and terminal, the
    journal's state, and no request sent when nothing was ``approved``."""
    problems, ended = [], (outcome.final_state, outcome.request_status)
    if ended not in TERMINAL_OUTCOMES:
        problems.append(f"undocumented ending {ended}")
    journaled = {row["state"] for row in snap.entries.values()}
    if journaled != {outcome.final_state}:
        problems.append(f"journal says {sorted(journaled)}, the runtime ended in {outcome.final_state}")
    if not approved and snap.requests:
        problems.append(f"{snap.requests} requests reached the service without authorisation/confirmation")
    return problems


def restart_queries_first(states_at_restart: dict[str, str], ops: list[tuple[str, str]]) -> list[str]:
    problems = []
    for inv, state in states_at_restart.items():
        if state not in (State.EXECUTING.value, State.OUTCOME_UNKNOWN.value):
            continue
        mine = [kind for kind, key in ops if owner_of(key) == inv]
        if mine and mine[0] != "query":
            problems.append(f"{inv} was {state} at the restart, which sent before asking: {mine}")
    return problems


def unknown_settled(before: Snapshot, after: Snapshot, ops: list[tuple[str, str]]) -> list[str]:
    problems = []
    unknown = [inv for inv, state in before.states().items() if state == State.OUTCOME_UNKNOWN.value]
    for inv in unknown:
        state = after.states()[inv]
        asked = [kind for kind, key in ops if owner_of(key) == inv]
        if state == State.OUTCOME_UNKNOWN.value or asked[:1] != ["query"] or "send" in asked:
            problems.append(f"{inv} was OUTCOME_UNKNOWN; the later restart did {asked} and left it {state}")
    if after.executions != before.executions:
        problems.append(f"settling executed {after.executions - before.executions} request(s)")
    return problems
