"""§7.16's contract as clauses on a trace's events (``labkit.trace.clauses``), and the helpers they share.

A kind's ``clauses`` (``labkit/<domain>/clauses.py``) are one or two per row of the §7.16 table, each read off the
events alone (no golden trace, no second run): ``broken_at(events)`` is the ID of the first event that breaks the
clause (or a "(missing …)" note), None when the trace keeps it.
"""

from collections.abc import Callable
from dataclasses import dataclass

Events = list[dict]


@dataclass(frozen=True)
class Clause:
    row: str  # the §7.16 row (a TraceContract attribute)
    says: str
    broken_at: Callable[[Events], str | None]  # the first event that breaks it (its ID), or None


def first(events: Events, wrong: Callable[[dict], bool], kind: str | None = None) -> str | None:
    """The ID of the first event (of type ``kind``) for which ``wrong`` holds."""
    return next((e["event_id"] for e in events if kind in (None, e["event_type"]) and wrong(e["payload"])), None)


def types(events: Events) -> list[str]:
    return [e["event_type"] for e in events]


def missing(events: Events, *wanted: str) -> str | None:
    """``"(missing …)"`` for the first of ``wanted`` the trace lacks, else None."""
    return next((f"(missing {t})" for t in wanted if t not in types(events)), None)


def out_of_order(events: Events, order: tuple[str, ...]) -> str | None:
    """The first event of ``order``'s types that comes before one listed earlier."""
    seen = -1
    for event in events:
        if event["event_type"] in order:
            rank = order.index(event["event_type"])
            if rank < seen:
                return event["event_id"]
            seen = rank
    return None


def draws_nothing(events: Events, kind: str) -> str | None:
    """The first event of type ``kind`` whose random-number counter moved."""
    return first(events, lambda p: "rng" in p and p["rng"]["counter_after"] != p["rng"]["counter_before"], kind)
