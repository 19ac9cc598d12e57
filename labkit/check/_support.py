"""What the checkers share beyond ``core``: golden traces, a run compared with the reference
run, closeness of arrays, and the small argument guards of the numeric labs.

A checker module holds its question (the cases it runs) and its hints; everything here is
plumbing, written once.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import CheckResult, failure


def golden(filename: str, first: int | None = None) -> list[dict]:
    """The golden trace ``fixtures/traces/<filename>`` (its first ``first`` events)."""
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    return read_jsonl(fixture_path("traces", filename))[:first]


def event_where(event: dict, field: str, case: str) -> str:
    """``d03 denoise.updated (step 2), field tensors.x — case`` (no step for stepless events)."""
    step = event.get("logical_step")
    at = f" (step {step})" if step is not None else ""
    return f"{event['event_id']} {event['event_type']}{at}, field {field} — {case}"


def compare_traces(case: str, expected: list[dict], got: list[dict], hint_for=None) -> CheckResult | None:
    """None when the traces agree; otherwise their first divergence as a failed CheckResult.

    ``hint_for(divergence)`` turns the divergent event and field into a hint."""
    from labkit.trace.divergence import first_divergence

    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    return failure(
        "your run diverges from the reference run",
        where=event_where(event, div.field, case),
        rule=div.rule,
        got=div.value_b,
        expected=div.value_a,
        hint=hint_for(div) if hint_for else None,
    )


def failure_at(message: str, got, expected, index, *, where: str, rule: str, hint: str) -> CheckResult:
    """A failure at ``index`` of two arrays: the reader's value there and the reference's."""
    return failure(message, where=where, rule=rule, got=got[index].item(), expected=expected[index].item(), hint=hint)


# -- the numeric exercises' helpers ------------------------------------------------------------


def first_bad_index(got, expected, atol: float = 1e-12) -> tuple[int, ...] | None:
    """Index (C order) of the first element of ``got`` not within ``atol`` of ``expected``."""

    if got.dtype == bool or expected.dtype == bool:
        bad = np.argwhere(got != expected)
    else:
        bad = np.argwhere(~np.isclose(got, expected, rtol=0.0, atol=atol))
    return None if bad.size == 0 else tuple(int(i) for i in bad[0])


def non_finite_index(array) -> tuple[int, ...] | None:
    """Index of the first NaN or infinity of a float array, or None."""

    if np.issubdtype(array.dtype, np.floating):
        bad = np.argwhere(~np.isfinite(array))
        if bad.size:
            return tuple(int(i) for i in bad[0])
    return None
