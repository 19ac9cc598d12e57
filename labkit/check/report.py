"""Exercise of lab 12: the keys and nesting of the mechanism-labs report, judged on the two real
reports labkit writes, ten damaged copies (each wrong at one key), another report format and a list.
"""

from __future__ import annotations

import copy
from functools import lru_cache

from labkit.check.core import table
from labkit.check.grading import CandidateProblem, call

#: what a well-formed report's problems are, and what a damaged one's must be when no key is at fault
NONE, SOME = [], "at least one problem"


@lru_cache(maxsize=1)
def _real_reports() -> tuple[dict, dict, dict]:
    """(passed labs report, failed labs report, fault-injection report), built by labkit."""
    from labkit.labs import report as reports

    good = reports.labs_report(samples=reports.MIN_SAMPLES)

    def fails():
        reports.require(False, "masks: a stand-in check that fails")

    stand_ins = {"ce_gradient": lambda: good["labs"]["ce_gradient"], "masks": fails}
    return good, reports.labs_report(samples=reports.MIN_SAMPLES, runners=stand_ins), reports.faults_report()


def _naming(key: str) -> str:
    return f"a problem naming {key!r}"


def _damaged(report: dict, change) -> dict:
    out = copy.deepcopy(report)
    change(out)
    return out


class _Raised(str):
    """What the reader's function raised, as its answer (a damaged report deserves problems, not a crash)."""


def _problems(candidate):
    """The reader's validator: a list of strings, or what it raised."""

    def piece(report):
        try:
            problems = call(candidate, report)
        except CandidateProblem as problem:
            if "not yet implemented" in str(problem):
                raise
            return _Raised(problem)
        if not isinstance(problems, list | tuple) or not all(isinstance(p, str) for p in problems):
            holding = " holding non-strings" if isinstance(problems, list | tuple) else ""
            raise CandidateProblem(
                "return a list of strings (one per problem, [] for a well-formed report), "
                f"got {type(problems).__name__}{holding}"
            )
        return list(problems)

    return piece


def _judged(problems, expected) -> str | None:
    """How the reader's problems miss what the report deserves (None: they do not)."""
    if isinstance(problems, _Raised):
        if expected == NONE:
            raise CandidateProblem(problems)
        return "a damaged report crashed your function"
    if expected == NONE:
        return "a well-formed report was rejected" if problems else None
    if not problems:
        return "a damaged report passed"
    key = expected.split("'")[1] if expected != SOME else None
    return None if key is None or any(key in p for p in problems) else "the problem does not say where"


@table(hook=_problems, agree=_judged)
def report_problems():
    good, failed, faults = _real_reports()
    damages = [  # (case, the report it damages, the damage, the key at fault)
        ("a passing report without “runtime”", good, lambda r: r.pop("runtime"), "runtime"),
        ("a passing report whose status is “ok”", good, lambda r: r.update(status="ok"), "status"),
        ("a passing report without the kl lab", good, lambda r: r["labs"].pop("kl"), "kl"),
        ("a passing report with an extra top-level key “note”", good, lambda r: r.update(note="x"), "note"),
        ("a passing report whose runtime lacks “dtype”", good, lambda r: r["runtime"].pop("dtype"), "dtype"),
        ("a passing report whose dpo lab is a list", good, lambda r: r["labs"].update(dpo=[0.2]), "dpo"),
        (
            "a passing report whose elapsed_seconds is the string “0.5”",
            good,
            lambda r: r.update(elapsed_seconds="0.5"),
            "elapsed_seconds",
        ),
        ("a passing report that also names a failed_lab", good, lambda r: r.update(failed_lab="kl"), "failed_lab"),
        ("a failed report without “failure”", failed, lambda r: r.pop("failure"), "failure"),
        ("a passing report with an unknown lab “ppo”", good, lambda r: r["labs"].update(ppo={}), "ppo"),
    ]
    return [
        ("a real report of a passing run", (good,), NONE),
        ("a real report of a failed run", (failed,), NONE),
        *[(case, (_damaged(report, change),), _naming(key)) for case, report, change, key in damages],
        ("the fault-injection report (another format)", (faults,), _naming("labs")),
        ("a list instead of a report", ([good],), SOME),
    ]
