"""The declarative gradings an exercise is built from (``labkit.check.core`` holds the engine).

* ``value`` — a prediction or a derived quantity against what the real kernels compute, at a
  stated tolerance; the verdict then shows the run and why;
* ``function`` — the reader's function on cases against a hidden reference, first divergence;
* ``trace`` — the reader's piece inside the real runtime, first divergence against the reference
  trace, then direct cases (or the reader's piece and the real one compared call by call: ``lockstep``).
"""

from __future__ import annotations

from typing import Any

from labkit.check import feedback
from labkit.check.core import (
    CandidateProblem,
    CheckResult,
    Exercise,
    as_array,
    call,
    compare_arrays,
    failure,
    number,
    numeric_array,
    passed,
    register,
    unpack,
)


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


def compare_traces(case: str, expected: list[dict], got: list[dict]) -> CheckResult | None:
    """None when the traces agree; otherwise their first divergence as a failed CheckResult."""
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
    )


def value(name, page, kind, task, answer, *, idea, rule, why, tolerance=0.0, relative=False) -> Exercise:
    """A prediction or a derived quantity: ``answer()`` is what the real kernels compute; the
    reader's value passes within ``tolerance`` (a fraction of the answer when ``relative``);
    ``why(answer)`` is the run shown after the verdict."""

    def grade(candidate) -> CheckResult:
        expected = answer()
        allowed = tolerance * abs(expected) if relative else tolerance
        ok, got = _agrees(candidate, expected, allowed)
        shown = f"{why(expected)}" if callable(why) else why
        if ok:
            return passed(f"right — {shown}")
        rule_text = f"within ±{feedback.short(allowed)} of the run" if allowed else "exactly what the run gives"
        return failure(f"the run disagrees — {shown}", where="your value", rule=rule_text, got=got, expected=expected)

    return register(Exercise(name, page, kind, task, (), grade, idea, rule))


def _agrees(candidate, expected, allowed: float) -> tuple[bool, Any]:
    """Compare a reader's value with the run's: numbers within ``allowed``, words ignoring case
    and spaces, sequences item by item."""
    if isinstance(expected, bool):
        if not isinstance(candidate, bool):
            raise CandidateProblem(f"answer True or False, got {type(candidate).__name__}")
        return candidate == expected, candidate
    if isinstance(expected, str):
        if not isinstance(candidate, str):
            raise CandidateProblem(f"answer with a string, got {type(candidate).__name__}")
        return candidate.strip().casefold() == expected.strip().casefold(), candidate
    if isinstance(expected, tuple | list):
        if not isinstance(candidate, tuple | list) or len(candidate) != len(expected):
            raise CandidateProblem(f"answer with {len(expected)} items, got {feedback.short(candidate)}")
        pairs = [_agrees(c, e, allowed) for c, e in zip(candidate, expected, strict=True)]
        return all(ok for ok, _ in pairs), list(candidate)
    got = number(candidate, "your value")
    return abs(got - float(expected)) <= allowed, got


def function(
    name,
    page,
    kind,
    task,
    signature,
    cases,
    reference,
    *,
    idea,
    rule,
    atol=1e-12,
    outputs=("result",),
    first=None,
    hook=None,
    exact=False,
):
    """The reader's function on ``cases()`` — (label, args) pairs, fresh copies each call — against
    the hidden ``reference``, stopping at the first case and index that differ beyond ``atol``. A tuple
    result is named by ``outputs``; ``first`` names the output compared first (a cause before its effect);
    ``hook(candidate)`` is what is called instead (it checks what the reader returns); ``exact`` compares
    whole values (IDs, words, lists of them) instead of numbers."""

    def grade(candidate) -> CheckResult:
        piece = hook(candidate) if hook else candidate
        return compare_cases(piece, cases(), reference, atol=atol, outputs=outputs, first=first, exact=exact)

    return register(Exercise(name, page, kind, task, tuple(signature), grade, idea, rule))


def trace(
    name,
    page,
    kind,
    task,
    signature,
    runs,
    *,
    idea,
    rule,
    hook=None,
    cases=(),
    reference=None,
    atol=0.0,
    cases_first=False,
    outputs=("result",),
    first=None,
):
    """The reader's piece inside the real runtime: ``runs()`` gives (label, reference events, run) with
    ``run(piece) -> events``; the first divergence of a run fails it (event, field, rule, both values);
    a run whose pieces are compared in ``lockstep`` (reference events None) fails where one diverges.
    ``hook(candidate)`` is the piece the runtime calls, fresh for each run (it checks what the reader
    returns); a hook that compares each call with the real piece keeps its first disagreement as
    ``divergence`` (whole arrays a trace only summarises), reported once the run's trace agrees.
    The direct ``cases()``, for situations the runs never reach, are compared as in ``function``
    (``outputs``, ``first``) — after the runs, or before them when ``cases_first``."""
    make = hook or (lambda candidate: candidate)

    def direct(candidate) -> CheckResult | None:
        found = list(cases()) if callable(cases) else list(cases)
        verdict = (
            compare_cases(make(candidate), found, reference, atol=atol, outputs=outputs, first=first) if found else None
        )
        return None if verdict is None or verdict.passed else verdict

    def grade(candidate) -> CheckResult:
        if cases_first and (failed := direct(candidate)) is not None:
            return failed
        for label, expected, run in runs():
            piece = make(candidate)
            try:
                events = run(piece)
            except Diverged as diverged:
                return diverged.result
            failed = None if expected is None else compare_traces(label, expected, events)
            if failed is not None or (failed := getattr(piece, "divergence", None)) is not None:
                return failed
        if not cases_first and (failed := direct(candidate)) is not None:
            return failed
        return passed("every run reproduces its reference run")

    return register(Exercise(name, page, kind, task, tuple(signature), grade, idea, rule))


class Diverged(Exception):
    """A reader's piece disagreed with the real one inside a run: its failure, carried out of the run."""

    def __init__(self, result: CheckResult):
        super().__init__(result.where)
        self.result = result


def lockstep(candidate, reference, args, *, where, atol=1e-12, outputs=("result",), first=None):
    """The reader's piece and the real one on the same ``args`` inside a run: raise ``Diverged`` at the
    first output and index beyond ``atol`` (a problem names ``where``); else the real piece's result, so
    the run goes on along the reference path."""
    try:
        verdict = compare_cases(candidate, [(where, args)], reference, atol=atol, outputs=outputs, first=first)
    except CandidateProblem as problem:
        if "not yet implemented" in str(problem):
            raise
        raise CandidateProblem(f"at {where}: {problem}") from None
    if not verdict.passed:
        raise Diverged(verdict)
    return reference(*args)


def compare_cases(candidate, cases, reference, *, atol, outputs=("result",), first=None, exact=False) -> CheckResult:
    """The first case and index where ``candidate`` and ``reference`` differ beyond ``atol``, or a pass."""
    import copy

    import numpy as np

    count = 0
    for label, args in cases:
        expected = reference(*copy.deepcopy(args))
        got = call(candidate, *copy.deepcopy(args))
        expected = expected if isinstance(expected, tuple) else (expected,)
        gots = unpack(got, outputs) if len(outputs) > 1 else (got,)
        triples = list(zip(outputs, gots, expected, strict=True))
        for what, g, e in sorted(triples, key=lambda item: item[0] != first):
            if exact:
                g = g.tolist() if hasattr(g, "tolist") else list(g) if isinstance(g, tuple | list) else g
                if g != e:
                    return failure("differs from the reference", where=f"case “{label}”, {what}", got=g, expected=e)
                continue
            e = np.asarray(e)
            g = numeric_array(g, what, None) if e.dtype != bool else as_array(g, what)
            if g.shape != e.shape:
                return failure(
                    f"at {label}: {what} must have shape {list(e.shape)}, got {list(g.shape)}",
                    where=f"case “{label}”, {what}",
                    rule="shape",
                    got=list(g.shape),
                    expected=list(e.shape),
                )
            verdict = compare_arrays(g, e, atol=atol, where=f"case “{label}”, {what}", hint=None)
            if not verdict.passed:
                return verdict
        count += 1
    return passed(f"matches on all {count} cases")
