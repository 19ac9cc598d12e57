"""Exercises of the trace-record page (§7.1)."""

from __future__ import annotations

from labkit.check.grading import function

_CASES = {
    "a well-formed chain": [("e00", None), ("e01", "e00"), ("e02", "e01")],
    "a parent that points forward": [("e00", None), ("e01", "e02"), ("e02", "e00")],
    "a parent that does not exist": [("e00", None), ("e01", "e00"), ("e02", "e09")],
    "a second root": [("e00", None), ("e01", None), ("e02", "e01")],
    "a tree, not a chain": [("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01")],
}


def _cases():
    def event(e, p):
        fields = {"component": "c", "event_type": "a.b", "logical_step": None, "payload": {}}
        return {"trace_id": "trace-x", "event_id": e, "parent_event_id": p, **fields}

    return [(name, ([event(e, p) for e, p in pairs],)) for name, pairs in _CASES.items()]


def _reference(events: list[dict]) -> list[str]:
    seen: set[str] = set()
    bad = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad


function(
    "bad_parents",
    "notebooks/07-traces/01-trace-record.md",
    "diagnose",
    "return the IDs of events whose parent is not an earlier event of the trace (only the first event may have "
    "no parent), in trace order",
    ("events",),
    _cases,
    _reference,
    exact=True,
    idea="an event may only point back at an event that happened before it",
    rule="walk the events in order and remember which IDs you have already seen; a parent is valid only if it "
    "was seen before the event that names it",
)
