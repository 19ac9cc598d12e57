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
