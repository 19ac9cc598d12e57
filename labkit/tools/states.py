"""The Invocation state machine of trace three (§7.11–7.15), failure states included.

Happy path::

    PROPOSED → PARSED → VALIDATED → AUTHORIZED → PREPARED → EXECUTING → COMMITTED → OBSERVED

Only the moves in ``TRANSITIONS`` are legal (anything else raises ``IllegalTransition``); the side effect
may happen only on EXECUTING → COMMITTED, or OUTCOME_UNKNOWN → COMMITTED when a query finds it.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Self


class State(StrEnum):
    PROPOSED = "PROPOSED"
    PARSED = "PARSED"
    VALIDATED = "VALIDATED"
    AUTHORIZED = "AUTHORIZED"
    PREPARED = "PREPARED"
    EXECUTING = "EXECUTING"
    COMMITTED = "COMMITTED"
    OBSERVED = "OBSERVED"
    PARSE_REJECTED = "PARSE_REJECTED"  # the proposal bytes are not a JSON object
    VALIDATION_REJECTED = "VALIDATION_REJECTED"  # the arguments break the ToolSpec's schema (an extra field)
    AUTHORIZATION_DENIED = "AUTHORIZATION_DENIED"  # the subject lacks the capability or targets another scope
    CONFIRMATION_REJECTED = "CONFIRMATION_REJECTED"  # no approval, or one for another Invocation's digest
    CANCELLED = "CANCELLED"  # the user cancelled before anything was sent
    NOT_COMMITTED = "NOT_COMMITTED"  # the service answered "not committed": retry with the same key
    # sent, but no answer: query the service by the same key; if the query fails too, resend with the
    # same key, or end here (terminal) with the key to query when the budget is spent
    OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN"
    FAILED = "FAILED"  # the retry budget ran out with nothing committed


S = State
#: every legal move, read-only: a reader's edit cannot loosen the machine
TRANSITIONS: Mapping[State, frozenset[State]] = MappingProxyType(
    {
        S.PROPOSED: frozenset({S.PARSED, S.PARSE_REJECTED}),
        S.PARSED: frozenset({S.VALIDATED, S.VALIDATION_REJECTED}),
        S.VALIDATED: frozenset({S.AUTHORIZED, S.AUTHORIZATION_DENIED}),
        S.AUTHORIZED: frozenset({S.PREPARED}),
        S.PREPARED: frozenset({S.EXECUTING, S.CONFIRMATION_REJECTED, S.CANCELLED}),
        S.EXECUTING: frozenset({S.COMMITTED, S.NOT_COMMITTED, S.OUTCOME_UNKNOWN}),
        S.NOT_COMMITTED: frozenset({S.EXECUTING, S.FAILED}),
        S.OUTCOME_UNKNOWN: frozenset({S.COMMITTED, S.NOT_COMMITTED, S.EXECUTING}),
        S.COMMITTED: frozenset({S.OBSERVED}),
    }
)
#: the states of an Invocation whose event exists
COMMITTED = (State.COMMITTED.value, State.OBSERVED.value)
#: (final state, request status) pairs a run may end in: COMMITTED when a cancel came after the
#: commit, OUTCOME_UNKNOWN only when the budget ran out
TERMINAL_OUTCOMES = frozenset(
    {
        ("OBSERVED", "completed"),
        ("COMMITTED", "cancelled-after-commit"),
        ("FAILED", "failed"),
        ("PARSE_REJECTED", "rejected"),
        ("VALIDATION_REJECTED", "rejected"),
        ("AUTHORIZATION_DENIED", "denied"),
        ("CONFIRMATION_REJECTED", "needs_new_confirmation"),
        ("CANCELLED", "cancelled"),
        ("OUTCOME_UNKNOWN", "outcome_unknown"),
    }
)


class IllegalTransition(ValueError):
    """A move the state machine does not allow; the message names both states."""


@dataclass
class InvocationMachine:
    """The current state and every move made (``history``: (from, to, event_id)); once ``attach``ed, each
    move is journaled *before* the state changes, so the journal is never behind what the runtime acts on."""

    state: State = State.PROPOSED
    history: list[tuple[str, str, str | None]] = field(default_factory=list)
    journal: object = None  # labkit.tools.journal.Journal
    invocation_id: str | None = None

    def attach(self, journal, invocation: dict, retry_budget: int) -> None:
        """Start journaling: the Invocation is written with the current state."""
        journal.open_invocation(invocation, self.state.value, retry_budget)
        self.journal, self.invocation_id = journal, invocation["invocation_id"]

    @classmethod
    def resume(cls, journal, invocation_id: str) -> Self:
        """A fresh machine (after a restart) in the state the journal last recorded."""
        entry = journal.entry(invocation_id)
        return cls(State(entry.state), journal.transitions(invocation_id), journal, invocation_id)

    def move(self, target: State | str, event_id: str | None = None, detail: dict | None = None) -> State:
        target = State(target)
        if target not in TRANSITIONS.get(self.state, frozenset()):
            allowed = sorted(s.value for s in TRANSITIONS.get(self.state, frozenset()))
            raise IllegalTransition(
                f"illegal transition {self.state.value} → {target.value}"
                + (f" at {event_id}" if event_id else "")
                + f"; from {self.state.value} the allowed moves are {allowed or 'none (terminal)'}"
            )
        if self.journal is not None:
            self.journal.record(self.invocation_id, self.state.value, target.value, event_id, detail)
        self.history.append((self.state.value, target.value, event_id))
        self.state = target
        return target
