"""One killed-and-recovered execution, incarnation by incarnation, for a reader to follow.

``pick_recovered(runs)`` finds the first schedule in which a kill came at the worst moment:
the calendar had committed an invocation's event while the journal still said EXECUTING
(the service's commit was done, the runtime's record of it was not).  ``timeline`` lists
what each incarnation did for that invocation, and ``journal_rows`` the journal's rows for it
in one snapshot — at the kill, and after the recovery.
"""

from __future__ import annotations

from labkit.tools.states import State
from labkit.tools.torture.crashes import ScheduleRun
from labkit.tools.torture.snapshot import Snapshot
from labkit.tools.torture.workload import owner_of, request_id_for


def _limbo(snap: Snapshot) -> list[str]:
    """Invocations the journal says are EXECUTING while the calendar already holds their event."""
    return [
        inv
        for inv, state in snap.states().items()
        if state == State.EXECUTING.value and snap.events_for(request_id_for(inv) + ":")
    ]


def pick_recovered(runs: list[ScheduleRun]) -> tuple[ScheduleRun, str, int]:
    """(run, invocation ID, index of the incarnation killed in limbo) of the first such kill
    whose invocation then ended COMMITTED — preferring one whose killed incarnation had sent
    that invocation's request once and nothing else; ValueError if the runs hold none."""
    found = []
    for run in runs:
        for index, here in enumerate(run.incarnations):
            if here.ending != "killed":
                continue
            for inv in _limbo(here.snapshot):
                if run.incarnations[-1].snapshot.states().get(inv) == State.COMMITTED.value:
                    simple = [kind for kind, key in here.ops if owner_of(key) == inv] == ["send"]
                    if simple:
                        return run, inv, index
                    found.append((run, inv, index))
    if found:
        return found[0]
    raise ValueError(
        f"none of the {len(runs)} schedules was killed between a service commit and its journal "
        f"record; expected at least one (run more kills)"
    )


def timeline(run: ScheduleRun, invocation_id: str) -> list[list]:
    """[incarnation, mode, how it ended, its requests and queries for the invocation,
    the journaled state after it, the calendar's events for the invocation after it]."""
    rows = []
    for number, here in enumerate(run.incarnations + ([run.settle] if run.settle else [])):
        ops = [f"{kind} {key.rsplit(':', 1)[-1]}" for kind, key in here.ops if owner_of(key) == invocation_id]
        ended = here.ending
        if here.ending == "killed":
            ended = (
                f"killed before statement {here.statements}: {here.sql.split(' ')[0]}"
                if here.sql
                else f"killed on a timer after {here.kill_after * 1000:.0f} ms"
            )
        snap = here.snapshot
        rows.append(
            [
                number + 1,
                here.mode,
                ended,
                ", ".join(ops) or "—",
                snap.states()[invocation_id],
                ", ".join(snap.events_for(request_id_for(invocation_id) + ":")) or "none",
            ]
        )
    return rows


def journal_rows(snap: Snapshot, invocation_id: str) -> list[list]:
    """[seq, from, to, idempotency key or event ID] of the invocation's journaled transitions."""
    rows = []
    for t in snap.transitions:
        if t["invocation_id"] == invocation_id:
            detail = t["detail"]
            rows.append([t["seq"], t["from"], t["to"], detail.get("event_id") or detail.get("idempotency_key") or "—"])
    return rows
