"""What a torture run executes: invocations like §7.12's inv_01, approved in a journal file, and
the configurations it may run them under, by name, so another process can rebuild them.

Each invocation has its own request ID (``req-<invocation_id>``), hence its own idempotency
keys; its start minute makes its request digest its own too.  ``approve`` moves it from
VALIDATED through AUTHORIZED to PREPARED in the journal and stores the approved digest —
what the runtime has done before the execute path begins.

Two configurations are deliberately broken, to prove the harness can fail: service
``no_idempotency`` (every request executes; the key's record is never consulted, so a duplicated
delivery, a resend after a lost answer or a racing client makes a second event) and runtime
``journal_after_send`` (the attempt is journaled only after the request went out, so a kill in
between leaves an event that no journal record authorised).
"""

from __future__ import annotations

from labkit.tools.calendar_service import CreateRequest, ServiceDesk
from labkit.tools.confirm import invocation_digest
from labkit.tools.fixture import fixture_invocation
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.states import InvocationMachine, State

#: the calendar service's clock at its first request (the fixture's committed_at)
CLOCK = "2026-07-19T14:00:04+08:00"
JOURNAL_FILE = "journal.sqlite"
SERVICE_FILE = "calendar.sqlite"


def make_invocation(invocation_id: str, minute: int = 0) -> Invocation:
    """inv_01's arguments with another ID and the start moved to 09:``minute``."""
    if not 0 <= minute < 60:
        raise ValueError(f"minute must be in 0..59, got {minute}")
    base = fixture_invocation()
    args = {**base.normalized_arguments, "start": f"2026-07-20T09:{minute:02d}:00+08:00"}
    return Invocation(invocation_id, base.tool, args, base.subject, base.required_capability)


def request_id_for(invocation_id: str) -> str:
    """The request ID whose keys (``<request_id>:create-event:<n>``) belong to this invocation."""
    return f"req-{invocation_id}"


def owner_of(key: str) -> str | None:
    """The invocation ID a key belongs to (None for a key this workload did not mint)."""
    if not key.startswith("req-") or ":create-event:" not in key:
        return None
    return key[len("req-") : key.index(":create-event:")]


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


#: name → the calendar service's execute (None: the library's idempotent one)
SERVICES = {"idempotent": None, "no_idempotency": always_perform}
#: name → keyword arguments of ``labkit.tools.executor.Executor``
RUNTIMES = {"journal_first": {}, "journal_after_send": {"journal_before_send": False}}


def service_execute(name: str):
    if name not in SERVICES:
        raise ValueError(f"service must be one of {list(SERVICES)}, got {name!r}")
    return SERVICES[name]


def runtime_options(name: str) -> dict:
    if name not in RUNTIMES:
        raise ValueError(f"runtime must be one of {list(RUNTIMES)}, got {name!r}")
    return dict(RUNTIMES[name])
