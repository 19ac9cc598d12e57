"""What a torture run executes: invocations like §7.12's inv_01, approved in a journal file.

Each invocation has its own request ID (``req-<invocation_id>``), hence its own idempotency
keys; its start minute makes its request digest its own too.  ``approve`` moves it from
VALIDATED through AUTHORIZED to PREPARED in the journal and stores the approved digest —
what the runtime has done before the execute path begins.
"""

from __future__ import annotations

from labkit.tools.confirm import invocation_digest
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.schedules import fixture_invocation
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
