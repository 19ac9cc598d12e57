"""Exercises of the trace-record page (§7.1)."""

from __future__ import annotations

from labkit.check.core import CheckResult, as_array, call, exercise, failure, passed

_CASES = {
    "a well-formed chain": [("e00", None), ("e01", "e00"), ("e02", "e01")],
    "a parent that points forward": [("e00", None), ("e01", "e02"), ("e02", "e00")],
    "a parent that does not exist": [("e00", None), ("e01", "e00"), ("e02", "e09")],
    "a second root": [("e00", None), ("e01", None), ("e02", "e01")],
    "a tree, not a chain": [("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01")],
}


def _reference(events: list[dict]) -> list[str]:
    seen: set[str] = set()
    bad = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad


@exercise(
    "bad_parents",
    page="notebooks/07-traces/01-trace-record.md",
    signature=("events",),
    kind="diagnose",
    idea="an event may only point back at an event that happened before it",
)
def bad_parents(candidate) -> CheckResult:
    """return the IDs of events whose parent is not an earlier event of the trace (only the first
    event may have no parent)"""
    for name, pairs in _CASES.items():
        events = [
            {
                "trace_id": "trace-x",
                "event_id": e,
                "parent_event_id": p,
                "component": "c",
                "event_type": "a.b",
                "logical_step": None,
                "payload": {},
            }
            for e, p in pairs
        ]
        got = call(candidate, [dict(e) for e in events])
        if not isinstance(got, (list, tuple)):
            as_array(got, "the result")
            got = list(got)
        expected = _reference(events)
        if list(got) != expected:
            return failure(
                "a trace was judged wrongly",
                where=f"case “{name}”",
                rule="flagged event IDs, in trace order",
                got=list(got),
                expected=expected,
                hint="walk the events in order and remember which IDs you have already seen; "
                "a parent is valid only if it was seen before the event that names it",
            )
    return passed(f"all {len(_CASES)} traces judged correctly")
