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

Random races find a narrow window by luck.  ``interleave=True`` (two clients) forces it instead: the
service's critical section has labelled seams (``SEAMS``: before the lookup by key, between the lookup
and the first execution, after the execution, all before its transaction commits), and in round r
client 0 stops at seam ``SEAMS[r % 3]`` of its shared request and hands the turn to client 1 (a queue,
not a timer), which sends the same key's request right there on a connection that waits for no lock.
A sound service holds its lock at every seam, so that probe is refused at once ("blocked") and client 0
goes on; a service that lets the probe in between its lookup and its execution books the key twice, in
every run (``split_transactions``, kept as a broken fixture).  Client 1 then sends through the runtime as
usual; its result records the seam and what its probe met (``interleaved``).
"""

from __future__ import annotations

import traceback
from pathlib import Path

from harness.workload import (
    CLOCK,
    SERVICE_FILE,
    SERVICES,
    VARIANT,
    approve,
    executor_for,
    make_invocation,
    open_stores,
    start_child,
)
from labkit.tools.calendar_service import CalendarService, CreateRequest, ServiceTransport, idempotent_execute
from labkit.tools.confirm import request_digest
from labkit.tools.invariants import Snapshot, take
from labkit.tools.recovery import execute_and_recover
from labkit.tools.states import InvocationMachine
from labkit.tools.store import StoreError

#: every CONFLICT_EVERY-th round, the last client presents the shared key with another digest
CONFLICT_EVERY = 5
BARRIER_SECONDS = 120.0
#: how long a client waits for the store's lock (the machine may be shared and slow)
LOCK_SECONDS = 60.0
#: the labelled points of the service's critical section where deterministic interleavings stop
SEAMS = ("before_lookup", "before_perform", "after_perform")


class SeamDesk:
    """The service's desk with its seams labelled: ``gate(label, key)`` runs at each."""

    def __init__(self, desk, gate):
        self.desk, self.gate = desk, gate

    def stored(self, key: str):
        self.gate("before_lookup", key)
        return self.desk.stored(key)

    def perform(self, request: CreateRequest) -> dict:
        self.gate("before_perform", request.idempotency_key)
        answer = self.desk.perform(request)
        self.gate("after_perform", request.idempotency_key)
        return answer


class Turns:
    """Client 0's side of one interleaving per round: at the round's seam of the shared key, hand the
    turn to client 1 and wait for its word (the probe's outcome)."""

    def __init__(self, to_other, from_other):
        self.to_other, self.from_other, self.armed = to_other, from_other, None

    def arm(self, round_number: int, key: str) -> None:
        self.armed = (SEAMS[round_number % len(SEAMS)], key)

    def __call__(self, label: str, key: str) -> None:
        if self.armed == (label, key):
            self.armed = None
            self.to_other.put(label)
            self.from_other.get(timeout=BARRIER_SECONDS)

    def finish(self) -> None:
        """The round's requests are done: a seam the service never passed still gives client 1 its turn."""
        if self.armed is not None:
            label, _ = self.armed
            self.armed = None
            self.to_other.put(f"{label} (never reached)")
            self.from_other.get(timeout=BARRIER_SECONDS)


def probe_request(invocation) -> CreateRequest:
    """The first request the runtime sends for ``invocation`` (attempt 1, its key and digest)."""
    args = invocation.normalized_arguments
    key = f"req-{invocation.invocation_id}:create-event:1"
    return CreateRequest(
        key, request_digest(args), f"{invocation.subject}/{args['calendar_id']}", invocation.tool, args
    )


def probe(service: CalendarService, invocation, turns) -> dict:
    """Client 1's side: wait for client 0 to stop at a seam, send the shared request at once, report."""
    to_me, to_other = turns
    seam = to_me.get(timeout=BARRIER_SECONDS)
    try:
        met = service.create_event(probe_request(invocation)).get("status")
    except StoreError as exc:
        met = "blocked" if "locked" in str(exc) else f"refused: {exc}"
    except ValueError as exc:  # IdempotencyConflict: the key was taken with another digest
        met = f"conflict: {type(exc).__name__}"
    to_other.put(met)
    return {"seam": seam, "probe": met}


def round_invocations(round_number: int, client: int, clients: int) -> list:
    """The invocations this client executes in this round, in its order."""
    conflict = round_number % CONFLICT_EVERY == CONFLICT_EVERY - 1 and client == clients - 1 and clients > 1
    shared = make_invocation(f"race{round_number:03d}", minute=1 if conflict else 0)
    own = make_invocation(f"own{round_number:03d}c{client}", minute=client % 60)
    return [shared, own] if client % 2 == 0 else [own, shared]


def _interleaving(job: dict, service: CalendarService, turns):
    """(client 0's Turns or None, client 1's probing service or None) for this client."""
    if turns is None:
        return None, None
    if job["client"] == 0:
        mine = Turns(*turns)  # (to client 1, to client 0)
        service.execute = seamed(service.execute, mine)
        return mine, None
    execute = SERVICES[job["service"]] or idempotent_execute
    prober = CalendarService(CLOCK, path=str(Path(job["dir"]) / SERVICE_FILE), execute=execute, create=False)
    prober.db.execute("PRAGMA busy_timeout = 0")  # a lock held at the seam refuses the probe at once
    return None, prober


def seamed(execute, gate):
    """``execute`` with its desk's seams labelled (``SeamDesk``)."""
    return lambda desk, key, digest, request: execute(SeamDesk(desk, gate), key, digest, request)


def race_client(job: dict, barrier, turns, conn) -> None:
    """One client process: ``job`` = {"dir", "client", "clients", "rounds", "service", "runtime"};
    ``turns``: the two queues of the deterministic interleavings (None: random races)."""
    results = []
    try:
        client = job["client"]
        journal, service = open_stores(
            Path(job["dir"]), f"journal-{client}.sqlite", job["service"], LOCK_SECONDS, new_journal=True
        )
        mine, prober = _interleaving(job, service, turns)
        for number in range(job["rounds"]):
            invocations = round_invocations(number, client, job["clients"])
            digests = [approve(journal, invocation, 1) for invocation in invocations]
            barrier.wait(BARRIER_SECONDS)
            if mine is not None:
                mine.arm(number, executor_for(None, invocations[0].invocation_id, 1, job["runtime"]).key(1))
            interleaved = None if prober is None else probe(prober, invocations[-1], turns)
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
                        **({"interleaved": interleaved} if invocation is invocations[-1] and interleaved else {}),
                    }
                )
            if mine is not None:
                mine.finish()
        conn.send(("done", results))
    except Exception:  # noqa: BLE001 — reported as a finding
        barrier.abort()
        conn.send(("error", traceback.format_exc(limit=6)))
    conn.close()


def run_races(
    ctx, clients: int, rounds: int, where: Path, variant: dict = VARIANT, *, interleave: bool = False
) -> tuple[list, list, Snapshot]:
    """Run the clients; (results of every request, client errors, snapshot of every file).
    ``interleave``: the deterministic interleavings at the service's seams (two clients)."""
    if interleave and clients != 2:
        raise ValueError(f"deterministic interleavings take exactly 2 clients, got clients={clients}")
    where.mkdir(parents=True, exist_ok=False)
    CalendarService(CLOCK, path=str(where / SERVICE_FILE)).db.close()
    barrier, turns = ctx.Barrier(clients), (ctx.Queue(), ctx.Queue()) if interleave else None
    base = {"dir": str(where), "clients": clients, "rounds": rounds, **variant}
    children = [start_child(ctx, race_client, {**base, "client": c}, barrier, turns) for c in range(clients)]
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
