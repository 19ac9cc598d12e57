"""What a torture run executes, and one incarnation of the runtime that executes it.

The work: invocations like §7.12's inv_01 (``make_invocation``), each with its own request ID and
so its own idempotency keys, journaled up to PREPARED with their approved digest (``approve``);
``SERVICES`` and ``RUNTIMES`` name the sound variant and deliberately broken ones (a service without its
lookup by key, one whose lookup and execution are two transactions; a runtime that journals after it
sends), to prove the harness can fail.

``incarnation(job, conn)``, a child process, opens the stores in ``job["dir"]`` and runs every
invocation of the journal: ``mode="execute"`` executes the approved PREPARED ones
(``execute_and_recover``, as the happy run and the schedules do); ``mode="recover"`` (a restart)
and ``mode="settle"`` (later, on a healthy network) resolve each from the journal
(``recover_invocation``: a query by key, never a blind execution).  It tells the harness
``("halt", count, sql)`` before statement ``job["kill_at"]`` and waits to be killed there,
``("ready",)`` once its stores are open (for a kill ``job["kill_after"]`` seconds later),
``("op", kind, key)`` before every request and query, and last ``("done", statements)``,
``("refused", reason)`` for a store or journal it must not touch (exit 2), or ``("error", tb)``.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from labkit.tools.calendar_service import (
    CalendarService,
    CreateRequest,
    ServiceDesk,
    ServiceTransport,
    idempotent_execute,
)
from labkit.tools.confirm import ConfirmationError, invocation_digest
from labkit.tools.executor import Executor
from labkit.tools.fixture import fixture_invocation
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.recovery import execute_and_recover, recover_invocation, verify_approvals
from labkit.tools.seams import ExecutionPolicy
from labkit.tools.states import InvocationMachine, State
from labkit.tools.store import StoreError

#: the calendar service's clock at its first request (the fixture's committed_at)
CLOCK = "2026-07-19T14:00:04+08:00"
JOURNAL_FILE = "journal.sqlite"
SERVICE_FILE = "calendar.sqlite"
MODES = ("execute", "recover", "settle")


def make_invocation(invocation_id: str, minute: int = 0) -> Invocation:
    """inv_01's arguments with another ID and the start moved to 09:``minute`` (0–59: the harness draws no other)."""
    return fixture_invocation().with_arguments(invocation_id, start=f"2026-07-20T09:{minute:02d}:00+08:00")


def approve(journal: Journal, invocation: Invocation, retry_budget: int, approved: bool = True) -> str | None:
    """Journal the invocation up to PREPARED; store its digest as approved (unless ``approved`` is False)."""
    machine = InvocationMachine(State.VALIDATED)
    machine.attach(journal, invocation.to_json(), retry_budget)
    machine.move(State.AUTHORIZED)
    machine.move(State.PREPARED)
    if not approved:
        return None  # waiting for a confirmation: must never execute
    digest = invocation_digest(invocation)
    journal.update(invocation.invocation_id, approved_digest=digest)
    return digest


def always_perform(desk: ServiceDesk, key: str, request_digest: str, request: CreateRequest) -> dict:
    """The broken service: no lookup by key, every request is a first execution."""
    return desk.perform(request)


class _SplitDesk:
    """What ``split_transactions`` gives ``idempotent_execute``: a lookup that commits its transaction."""

    def __init__(self, desk, db):
        self.desk, self.db = desk, db

    def stored(self, key: str):
        found = self.desk.stored(key)
        self.db.execute("COMMIT")  # the lookup's transaction ends here; the execution begins its own
        return found

    def perform(self, request: CreateRequest) -> dict:
        return self.desk.perform(request)


def split_transactions(desk, key: str, request_digest: str, request: CreateRequest) -> dict:
    """The broken service: the key's lookup and its first execution in two transactions, so a client
    that comes in between finds the key free too (the same rules as ``idempotent_execute`` otherwise)."""
    inner = desk
    while not isinstance(inner, ServiceDesk):  # through the harness's seams to the service's own desk
        inner = inner.desk
    db = inner._service.db
    try:
        return idempotent_execute(_SplitDesk(desk, db), key, request_digest, request)
    finally:
        db.execute("BEGIN IMMEDIATE")  # create_event ends with a COMMIT: give it a transaction to end


#: name → the calendar service's execute (None: the library's idempotent one)
SERVICES = {"idempotent": None, "no_idempotency": always_perform, "split_transactions": split_transactions}
#: name → keyword arguments of ``labkit.tools.executor.Executor``
RUNTIMES = {"journal_first": {}, "journal_after_send": {"policy": ExecutionPolicy(journal_before_send=False)}}
#: the sound variant: the job keys a child reads its service and runtime from
VARIANT = {"service": "idempotent", "runtime": "journal_first"}


def named(table: dict, what: str, name: str):
    """``table[name]``, or a ValueError that lists the names."""
    if name not in table:
        raise ValueError(f"{what} must be one of {list(table)}, got {name!r}")
    return table[name]


def open_stores(
    where: Path, journal_file: str, service: str, timeout: float, *, new_journal: bool = False
) -> tuple[Journal, CalendarService]:
    """The journal ``journal_file`` and the calendar's store in ``where`` (both must exist, the journal
    unless ``new_journal``), the service executing as ``service``; refused when the two disagree."""
    execute = named(SERVICES, "service", service)
    journal = Journal(where / journal_file, timeout=timeout, create=new_journal)
    calendar = CalendarService(CLOCK, path=str(where / SERVICE_FILE), execute=execute, timeout=timeout, create=False)
    journal.check_against(calendar)
    return journal, calendar


def executor_for(transport, invocation_id: str, retry_budget: int, runtime: str) -> Executor:
    """The executor of one invocation under the runtime variant ``runtime``."""
    return Executor(transport, f"req-{invocation_id}", retry_budget, **named(RUNTIMES, "runtime", runtime))


def start_child(ctx, target, job: dict, *args):
    """Start ``target(job, *args, conn)`` in a child process; (our end of its pipe, the process)."""
    ours, theirs = ctx.Pipe()
    proc = ctx.Process(target=target, args=(job, *args, theirs), daemon=True)
    proc.start()
    theirs.close()
    return ours, proc


class KillSwitch:
    """A trace callback: counts statements; at ``kill_at`` it reports and waits to be killed."""

    def __init__(self, conn, kill_at: int | None):
        self.conn, self.kill_at, self.count = conn, kill_at, 0

    def __call__(self, sql: str) -> None:
        self.count += 1
        if self.count == self.kill_at:
            self.conn.send(("halt", self.count, " ".join(sql.split())[:80]))
            self.conn.recv()  # never returns: the harness kills us here


@dataclass
class ReportingTransport(ServiceTransport):
    """The service's transport, reporting each send and query to the harness (``conn``) before it happens."""

    conn: object = None

    def send(self, request):
        self.conn.send(("op", "send", request.idempotency_key))
        return super().send(request)

    def query(self, key: str):
        self.conn.send(("op", "query", key))
        return super().query(key)


def run_invocations(journal: Journal, transport, mode: str, runtime: str) -> None:
    verify_approvals(journal)  # refuse a tampered approval before anything is sent
    for entry in journal.entries():
        executor = executor_for(transport, entry.invocation_id, entry.retry_budget, runtime)
        if mode != "execute":
            recover_invocation(journal, executor, entry.invocation_id)
        elif entry.state == State.PREPARED.value and entry.approved_digest is not None:
            machine = InvocationMachine.resume(journal, entry.invocation_id)
            invocation = Invocation(**entry.invocation)
            execute_and_recover(journal, machine, invocation, entry.approved_digest, iter([executor]))


def incarnation(job: dict, conn) -> None:
    """Run one incarnation described by ``job``; report to ``conn``; exit 0, 2 (refused) or 1."""
    status = 0
    try:
        if job["mode"] not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {job['mode']!r}")
        journal, service = open_stores(Path(job["dir"]), JOURNAL_FILE, job["service"], job.get("timeout", 5.0))
        switch = KillSwitch(conn, job.get("kill_at"))
        journal.db.set_trace_callback(switch)
        service.db.set_trace_callback(switch)
        if job.get("kill_after") is not None:
            conn.send(("ready",))  # the harness's timer starts now
        plans = tuple(job.get("plan", ())), tuple(job.get("query_plan", ()))
        run_invocations(journal, ReportingTransport(service, *plans, conn=conn), job["mode"], job["runtime"])
        conn.send(("done", switch.count))
    except (StoreError, ConfirmationError) as exc:
        conn.send(("refused", str(exc)))
        status = 2
    except Exception:  # noqa: BLE001 — reported to the harness as a finding
        conn.send(("error", traceback.format_exc(limit=6)))
        status = 1
    conn.close()
    sys.exit(status)
