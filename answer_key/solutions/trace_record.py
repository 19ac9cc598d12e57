"""Solutions for the trace-record page (§7.1)."""


def bad_parents(events):
    seen = set()
    flagged = []
    for position, event in enumerate(events):
        parent = event["parent_event_id"]
        orphan = parent is None and position > 0
        dangling = parent is not None and parent not in seen
        if orphan or dangling:
            flagged.append(event["event_id"])
        seen.add(event["event_id"])
    return flagged
