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
from labkit.tools.recovery import execute_and_recover
from labkit.tools.states import InvocationMachine
from labkit.tools.torture.invariants import Snapshot, take
from labkit.tools.torture.workload import (
    CLOCK,
    SERVICE_FILE,
    VARIANT,
    approve,
    executor_for,
    make_invocation,
    open_stores,
    start_child,
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
        client = job["client"]
        journal, service = open_stores(
            Path(job["dir"]), f"journal-{client}.sqlite", job["service"], LOCK_SECONDS, new_journal=True
        )
        for number in range(job["rounds"]):
            invocations = round_invocations(number, client, job["clients"])
            digests = [approve(journal, invocation, 1) for invocation in invocations]
            barrier.wait(BARRIER_SECONDS)
            for invocation, digest in zip(invocations, digests, strict=True):
                machine = InvocationMachine.resume(journal, invocation.invocation_id)
                executor = executor_for(ServiceTransport(service), invocation.invocation_id, 1, job["runtime"])
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


def run_races(ctx, clients: int, rounds: int, where: Path, variant: dict = VARIANT) -> tuple[list, list, Snapshot]:
    """Run the clients; (results of every request, client errors, snapshot of every file)."""
    where.mkdir(parents=True, exist_ok=False)
    CalendarService(CLOCK, path=str(where / SERVICE_FILE)).db.close()
    barrier = ctx.Barrier(clients)
    base = {"dir": str(where), "clients": clients, "rounds": rounds, **variant}
    children = [start_child(ctx, race_client, {**base, "client": client}, barrier) for client in range(clients)]
    results, errors = [], []
    for client, (ours, proc) in enumerate(children):
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
    return results, errors, take(sorted(where.glob("journal-*.sqlite")), where / SERVICE_FILE)
