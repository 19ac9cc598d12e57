"""Helpers shared by several test modules (import as ``from _helpers import …``)."""

import time

from labkit.labs.report import report_differences


def assert_matches_source(name: str, computed: dict, source: dict) -> None:
    """A lab's report object equals the source's, key order and numbers; else list every difference."""
    differences = report_differences(computed, source)
    assert not differences, f"labkit's {name} object vs the source's:\n" + "\n".join(differences)


def timed(compute, *args, **kwargs):
    """``compute(*args, **kwargs)`` and its wall time in seconds."""
    started = time.perf_counter()
    result = compute(*args, **kwargs)
    return result, time.perf_counter() - started


#: §7.12's Invocation inv_01 as the chapter prints it (its normalized_arguments are §7.13's H input)
CHAPTER_INVOCATION = {
    "invocation_id": "inv_01",
    "tool": "calendar.create_event@v1",
    "normalized_arguments": {
        "calendar_id": "primary",
        "title": "带护照",
        "start": "2026-07-20T09:00:00+08:00",
        "duration_minutes": 10,
    },
    "subject": "user-42",
    "required_capability": "calendar.write:primary",
}
