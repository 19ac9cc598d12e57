"""Clients racing: the same approved invocation, the same idempotency key, at the same time.

``clients`` child processes share one calendar store file; each has its own journal.  In
every round they meet at a barrier and then each executes, in its own order, two approved
invocations through the runtime's executor: the round's shared invocation (every client the
same one, hence the same key ``req-race<r>:create-event:1`` and the same request digest) and
one of its own (a key nobody else uses).  Every fifth round the last client presents the
shared key with *another* request digest (the start moved by a minute), as a buggy client
reusing a key would.  The service's lookup and first execution share one ``BEGIN IMMEDIATE``
transaction, so whatever the timing: one commit per key, the stored response to every
request with the committed digest, a refusal (``IdempotencyConflict`` → FAILED) to the other.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from labkit.tools.calendar_service import CalendarService, ServiceTransport
from labkit.tools.executor import Executor
from labkit.tools.journal import Journal
from labkit.tools.recovery import execute_and_recover
from labkit.tools.states import InvocationMachine
from labkit.tools.torture import invariants as inv
from labkit.tools.torture.snapshot import Snapshot, take
from labkit.tools.torture.workload import (
    CLOCK,
    SERVICE_FILE,
    approve,
    make_invocation,
    request_id_for,
    runtime_options,
    service_execute,
)

#: every CONFLICT_EVERY-th round, the last client presents the shared key with another digest
CONFLICT_EVERY = 5
BARRIER_SECONDS = 120.0
#: how long a client waits for the store's lock (the machine may be shared and slow)
LOCK_SECONDS = 60.0


def round_invocations(round_number: int, client: int, clients: int) -> list:
    """The invocations this client executes in this round, in its order."""
    conflict = round_number % CONFLICT_EVERY == CONFLICT_EVERY - 1 and client == clients - 1 and clients > 1
    shared = make_invocation(f"race{round_number:03d}", minute=1 if conflict else 0)
    own = make_invocation(f"own{round_number:03d}c{client}", minute=client % 60)
    return [shared, own] if client % 2 == 0 else [own, shared]


def race_client(job: dict, barrier, conn) -> None:
    """One client process: ``job`` = {"dir", "client", "clients", "rounds", "service", "runtime"}."""
    results = []
    try:
        where, client = Path(job["dir"]), job["client"]
        journal = Journal(where / f"journal-{client}.sqlite", timeout=LOCK_SECONDS)
        service = CalendarService(
            CLOCK, path=str(where / SERVICE_FILE), execute=service_execute(job["service"]), timeout=LOCK_SECONDS
        )
        for number in range(job["rounds"]):
            work = [
                (invocation, approve(journal, invocation, 1))
                for invocation in round_invocations(number, client, job["clients"])
            ]
            barrier.wait(BARRIER_SECONDS)
            for invocation, digest in work:
                machine = InvocationMachine.resume(journal, invocation.invocation_id)
                executor = Executor(
                    ServiceTransport(service),
                    request_id_for(invocation.invocation_id),
                    1,
                    **runtime_options(job["runtime"]),
                )
                machine, result, _ = execute_and_recover(journal, machine, invocation, digest, iter([executor]))
                results.append(
                    {
                        "round": number,
                        "client": client,
                        "key": executor.key(1),
                        "invocation_id": invocation.invocation_id,
                        "request_digest": journal.entry(invocation.invocation_id).request_digest,
                        "state": machine.state.value,
                        "event_id": None if result is None else result["event_id"],
                    }
                )
        conn.send(("done", results))
    except Exception:  # noqa: BLE001 — reported as a finding
        barrier.abort()
        conn.send(("error", traceback.format_exc(limit=6)))
    conn.close()


def run_races(
    ctx, clients: int, rounds: int, where: Path, service: str = "idempotent", runtime: str = "journal_first"
) -> tuple[list[dict], list[str], Snapshot]:
    """Run the clients; (results of every request, client errors, snapshot of every file)."""
    if clients < 1 or rounds < 0:
        raise ValueError(f"clients must be >= 1 and rounds >= 0, got clients={clients}, rounds={rounds}")
    where.mkdir(parents=True, exist_ok=False)
    CalendarService(CLOCK, path=str(where / SERVICE_FILE)).db.close()
    barrier = ctx.Barrier(clients)
    pipes, procs = [], []
    for client in range(clients):
        job = {
            "dir": str(where),
            "client": client,
            "clients": clients,
            "rounds": rounds,
            "service": service,
            "runtime": runtime,
        }
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(target=race_client, args=(job, barrier, theirs), daemon=True)
        proc.start()
        theirs.close()
        pipes.append(ours)
        procs.append(proc)
    results, errors = [], []
    for client, (ours, proc) in enumerate(zip(pipes, procs, strict=True)):
        try:
            kind, payload = ours.recv()
        except EOFError:
            kind, payload = "error", "the client died without a word"
        if kind == "done":
            results += payload
        else:
            errors.append(f"client {client}: {payload}")
        ours.close()
        proc.join()
    journals = sorted(where.glob("journal-*.sqlite"))
    return results, errors, take(journals, where / SERVICE_FILE)


def one_commit_per_key(results: list[dict], snap: Snapshot) -> list[str]:
    """Per key: exactly one event and one execution; every request with the committed digest
    got that event, every request with another digest was refused (FAILED, no event)."""
    problems, by_key = [], {}
    for r in results:
        by_key.setdefault(r["key"], []).append(r)
    events = {}
    for event, key in snap.events:
        events.setdefault(key, []).append(event)
    for key, requests in sorted(by_key.items()):
        mine = events.get(key, [])
        if len(mine) != 1:
            problems.append(f"key {key}: {len(mine)} events {mine} for {len(requests)} requests")
            continue
        committed = snap.stored.get(key, {}).get("request_digest")
        for r in requests:
            expected = ("COMMITTED", mine[0]) if r["request_digest"] == committed else ("FAILED", None)
            if (r["state"], r["event_id"]) != expected:
                problems.append(
                    f"key {key}, client {r['client']}: got {(r['state'], r['event_id'])}, expected {expected}"
                )
    if snap.executions != len(by_key):
        problems.append(f"{snap.executions} executions for {len(by_key)} keys")
    return problems


def race_checks(results: list[dict], errors: list[str], snap: Snapshot) -> dict[str, list[str]]:
    return {
        "runtime_ran": errors,
        "one_commit_per_key": one_commit_per_key(results, snap),
        "events_authorised": inv.events_authorised(snap),
        "legal_path": inv.legal_path(snap),
        "integrity": inv.integrity(snap),
    }
