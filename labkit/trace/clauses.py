"""§7.16–7.17 as a check: a trace against the seven rows of its kind's state/update/terminal contract,
asked before any value is compared (the book's order, not the chapter's); each kind declares its clauses
in ``labkit/<domain>/clauses.py``."""

from dataclasses import dataclass

from labkit.trace.kinds import kind as trace_kind


@dataclass(frozen=True)
class Breach:
    row: str
    says: str
    event_id: str

    def __str__(self) -> str:
        return f"{self.row}: {self.says} — broken at {self.event_id}"


def check_contract(kind: str, events: list[dict]) -> list[Breach]:
    """Every clause of ``kind``'s contract that ``events`` break, in the §7.16 row order."""
    clauses = trace_kind(kind).clauses  # an unknown kind: a ValueError naming the kinds
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ValueError(f"events must be a list of event dicts, got {type(events).__name__}")
    breaches = []
    for clause in clauses:
        try:
            where = clause.broken_at(events)
        except (KeyError, TypeError, IndexError, AttributeError) as missing:  # a field the clause reads is gone
            where = f"(unreadable: {type(missing).__name__} {missing})"
        if where is not None:
            breaches.append(Breach(clause.row, clause.says, where))
    return breaches
