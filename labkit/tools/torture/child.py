"""One incarnation of the runtime: a child process that executes, recovers or settles.

``incarnation(job, conn)`` is the target of a child process (``multiprocessing``, any start
method).  It opens the journal and the calendar's store in ``job["dir"]`` and then, for every
invocation in the journal:

* ``mode="execute"`` — the first run: an approved PREPARED invocation is executed
  (``labkit.tools.recovery.execute_and_recover``, the path the happy run and the schedules take;
  a crash here is a real SIGKILL, and the restart is the next incarnation);
* ``mode="recover"`` — a restart: each invocation is resolved from the journal
  (``labkit.tools.recovery.recover_invocation``: EXECUTING and OUTCOME_UNKNOWN are settled by
  a query by key, never by executing blindly);
* ``mode="settle"`` — a later restart with a healthy network, which settles what a spent
  budget left OUTCOME_UNKNOWN.

The kill switch counts every SQL statement either store begins (``set_trace_callback``).
When the count reaches ``job["kill_at"]`` the child reports ``("halt", count, sql)`` and
waits; the harness kills it there with SIGKILL, so the statement never runs.  With
``job["kill_after"]`` the child reports ``("ready",)`` once its stores are open and the harness
kills it that many seconds later, wherever it is.  Every request
and query leaves the process only after ``("op", kind, key)`` was reported.  The last
message is ``("done", statements)``, ``("refused", reason)`` for a store or journal it must
not touch (exit status 2), or ``("error", traceback)``.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from labkit.tools.calendar_service import CalendarService, ServiceTransport
from labkit.tools.confirm import ConfirmationError
from labkit.tools.executor import Executor
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.recovery import execute_and_recover, recover_invocation, verify_approvals
from labkit.tools.states import InvocationMachine, State
from labkit.tools.store import StoreError
from labkit.tools.torture.workload import (
    CLOCK,
    JOURNAL_FILE,
    SERVICE_FILE,
    request_id_for,
    runtime_options,
    service_execute,
)

MODES = ("execute", "recover", "settle")


class KillSwitch:
    """A trace callback: counts statements; at ``kill_at`` it reports and waits to be killed."""

    def __init__(self, conn, kill_at: int | None):
        self.conn, self.kill_at, self.count = conn, kill_at, 0

    def __call__(self, sql: str) -> None:
        self.count += 1
        if self.count == self.kill_at:
            self.conn.send(("halt", self.count, " ".join(sql.split())[:80]))
            self.conn.recv()  # never returns: the harness kills us here


class ReportingTransport:
    """The service's transport, reporting each send and query to the harness before it happens."""

    def __init__(self, transport: ServiceTransport, conn):
        self.transport, self.conn = transport, conn

    def send(self, request):
        self.conn.send(("op", "send", request.idempotency_key))
        return self.transport.send(request)

    def receive(self):
        return self.transport.receive()

    def query(self, key: str):
        self.conn.send(("op", "query", key))
        return self.transport.query(key)


def run_invocations(journal: Journal, transport, mode: str, runtime: str) -> None:
    verify_approvals(journal)  # refuse a tampered approval before anything is sent
    for entry in journal.entries():
        executor = Executor(
            transport, request_id_for(entry.invocation_id), entry.retry_budget, **runtime_options(runtime)
        )
        if mode == "execute":
            if entry.state == State.PREPARED.value and entry.approved_digest is not None:
                machine = InvocationMachine.resume(journal, entry.invocation_id)
                invocation = Invocation(**entry.invocation)
                execute_and_recover(journal, machine, invocation, entry.approved_digest, iter([executor]))
        else:
            recover_invocation(journal, executor, entry.invocation_id)


def incarnation(job: dict, conn) -> None:
    """Run one incarnation described by ``job``; report to ``conn``; exit 0, 2 (refused) or 1."""
    status = 0
    try:
        if job["mode"] not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {job['mode']!r}")
        where = Path(job["dir"])
        journal = Journal(where / JOURNAL_FILE, timeout=job.get("timeout", 5.0))
        service = CalendarService(
            CLOCK,
            path=str(where / SERVICE_FILE),
            execute=service_execute(job["service"]),
            timeout=job.get("timeout", 5.0),
        )
        switch = KillSwitch(conn, job.get("kill_at"))
        journal.db.set_trace_callback(switch)
        service.db.set_trace_callback(switch)
        if job.get("kill_after") is not None:
            conn.send(("ready",))  # the harness's timer starts now
        transport = ReportingTransport(
            ServiceTransport(service, tuple(job.get("plan", ())), tuple(job.get("query_plan", ()))), conn
        )
        run_invocations(journal, transport, job["mode"], job["runtime"])
        conn.send(("done", switch.count))
    except (StoreError, ConfirmationError) as exc:
        conn.send(("refused", str(exc)))
        status = 2
    except Exception:  # noqa: BLE001 — reported to the harness as a finding
        conn.send(("error", traceback.format_exc(limit=6)))
        status = 1
    conn.close()
    sys.exit(status)
