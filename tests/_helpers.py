"""Helpers shared by several test modules (import as ``from _helpers import …``)."""

import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the classroom tests that run hand-ins need bubblewrap
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def assert_matches_source(name: str, computed: dict, source: dict) -> None:
    """A lab's report object equals the source's, key order and numbers; else list every difference."""
    differences = report_differences(computed, source)
    assert not differences, f"labkit's {name} object vs the source's:\n" + "\n".join(differences)


def report_differences(actual, reference, path: str = "") -> list[str]:
    """Every place where ``actual`` differs from ``reference`` (JSON-like values), as readable lines.

    Keys are compared in order (a report's key order is part of its format); floats must be
    equal, and a differing float is shown with the difference.  Empty list: identical.
    """
    here = path or "report"
    if isinstance(reference, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{here}: expected an object, got {type(actual).__name__}"]
        if list(actual) != list(reference):
            return [f"{here}: keys {list(actual)} differ from the reference's {list(reference)}"]
        out = []
        for key in reference:
            out += report_differences(actual[key], reference[key], f"{path}.{key}" if path else key)
        return out
    if isinstance(reference, list | tuple):
        if not isinstance(actual, list | tuple) or len(actual) != len(reference):
            return [f"{here}: expected a list of {len(reference)}, got {actual!r}"]
        out = []
        for i, (a, r) in enumerate(zip(actual, reference, strict=True)):
            out += report_differences(a, r, f"{here}[{i}]")
        return out
    if isinstance(reference, float) and isinstance(actual, float):  # JSON tells 0 from 0.0
        if actual != reference and not (actual != actual and reference != reference):
            return [f"{here}: {actual!r} vs reference {reference!r} (off by {abs(actual - reference):.3e})"]
        return []
    if type(actual) is not type(reference) or actual != reference:
        return [f"{here}: {actual!r} vs reference {reference!r}"]
    return []


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


def grade_class(handins: Path, out: Path, *extra: str, wait: bool = True):
    """``python -m classroom grade HANDINS --out OUT`` with two workers (a Popen when ``wait`` is False)."""
    command = [sys.executable, "-m", "classroom", "grade", str(handins), "--out", str(out), "--workers", "2", *extra]
    if not wait:
        return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def needs_key() -> None:
    """Skip where the answer key is not (a class copy): a class cannot be generated there."""
    from benchmarks.grading import key_files

    try:
        key_files()
    except FileNotFoundError:
        pytest.skip("the answer key is not in this copy")
