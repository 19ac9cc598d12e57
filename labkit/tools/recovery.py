"""Restart after a crash: read the journal, resolve every open Invocation, execute nothing blindly.

By its last journaled state: PREPARED with an approval executes from the next attempt; EXECUTING (the
crash came before an answer was recorded) becomes OUTCOME_UNKNOWN; OUTCOME_UNKNOWN is queried **by the
same idempotency key** (a stored ``ok`` → COMMITTED, nothing → NOT_COMMITTED, the query failing → the
next attempt with the same key if the budget allows, else it stays, terminal); NOT_COMMITTED takes the
next attempt with the same key or ends FAILED; COMMITTED reads its result back from the journal.

``execute_and_recover`` is the one execute-and-recover path: the happy run, the fault schedules and the
crash harness take it.  ``verify_approvals`` refuses a journal whose approval is for another digest.
"""

from collections.abc import Callable, Iterator

from labkit.tools.confirm import ConfirmationError, invocation_digest
from labkit.tools.executor import Crash, Executor
from labkit.tools.normalize import Invocation
from labkit.tools.states import InvocationMachine, State


def execute_and_recover(
    journal,
    machine: InvocationMachine,
    invocation: Invocation,
    approved: str,
    executors: Iterator[Executor],
    on_crash: Callable | None = None,
) -> tuple[InvocationMachine, dict | None, int]:
    """(machine, committed result or None, restarts): execute with the first executor; after each ``Crash``
    a restart (``on_crash(crash)``, the next executor) resolves the Invocation from the journal."""
    restarts = 0
    while True:
        try:
            if not restarts:
                return machine, next(executors).execute(machine, invocation, approved), 0
            return (*recover_invocation(journal, next(executors), invocation.invocation_id), restarts)
        except Crash as crash:
            restarts += 1
            if on_crash is not None:
                on_crash(crash)


def recover_invocation(journal, executor: Executor, invocation_id: str) -> tuple[InvocationMachine, dict | None]:
    """Resume one Invocation from the journal with ``executor`` (its transport, budget, events)."""
    machine = InvocationMachine.resume(journal, invocation_id)
    entry = journal.entry(invocation_id)
    invocation = Invocation(**entry.invocation)
    key = entry.idempotency_key
    if machine.state is State.PREPARED and entry.approved_digest is None:
        return machine, None  # still waiting for a confirmation
    if machine.state is State.EXECUTING:
        machine.move(State.OUTCOME_UNKNOWN, executor.next_event_id(), {"reason": "restart"})
        unknown = {"idempotency_key": key, "side_effect": "unknown", "reason": "restart after a crash while executing"}
        executor.report(machine, "runtime", "external.outcome_unknown", entry.attempts, **unknown)
    if machine.state is State.OUTCOME_UNKNOWN:
        result = executor.resolve_unknown(machine, key, entry.attempts)
        if result is not None:
            return machine, result
    # approved and never sent, still unknown (the query failed), or not committed: the next attempt, same key
    if machine.state in (State.PREPARED, State.OUTCOME_UNKNOWN, State.NOT_COMMITTED):
        if entry.attempts < executor.retry_budget:
            return machine, executor.execute(machine, invocation, entry.approved_digest, entry.attempts + 1)
        return machine, executor.exhausted(machine, entry.attempts)
    if machine.state in (State.COMMITTED, State.OBSERVED):
        return machine, journal.committed_result(invocation_id)
    return machine, None


def verify_approvals(journal) -> None:
    """Raise ``ConfirmationError`` if any journaled approval is for another digest than its Invocation."""
    for entry in journal.entries():
        digest = invocation_digest(Invocation(**entry.invocation))
        if entry.approved_digest not in (None, digest):
            raise ConfirmationError(
                f"journal {journal.path}: invocation {entry.invocation_id} was approved for digest "
                f"{entry.approved_digest[:19]}…, but the journaled Invocation has digest {digest[:19]}…; "
                f"refusing to recover anything until it is confirmed again"
            )


def recover(journal, executor: Executor) -> dict[str, tuple[str, dict | None]]:
    """Resolve every Invocation of the journal; {invocation_id: (state, result)}."""
    verify_approvals(journal)
    resolved = {e.invocation_id: recover_invocation(journal, executor, e.invocation_id) for e in journal.entries()}
    return {invocation_id: (machine.state.value, result) for invocation_id, (machine, result) in resolved.items()}
