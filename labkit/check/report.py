"""Exercise of lab 12: the keys and nesting of the mechanism-labs report."""

from __future__ import annotations

import copy
from functools import lru_cache

from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, passed


@lru_cache(maxsize=1)
def _real_reports() -> tuple[dict, dict, dict]:
    """(passed labs report, failed labs report, fault-injection report), built by labkit."""
    from labkit.labs import report as reports

    good = reports.labs_report(samples=reports.MIN_SAMPLES)

    def fails():
        reports.require(False, "masks: a stand-in check that fails")

    failed = reports.labs_report(
        samples=reports.MIN_SAMPLES, runners={"ce_gradient": lambda: good["labs"]["ce_gradient"], "masks": fails}
    )
    faults = reports.faults_report()
    return good, failed, faults


def _damaged(report: dict, change) -> dict:
    out = copy.deepcopy(report)
    change(out)
    return out


#: the key a damaged report has wrong → the hint for a function that misses it
_HINTS = {
    "runtime": "check that every required key is present",
    "status": "check the values as well as the keys: status is one of two words",
    "kl": "a passing run reports all eight labs: look inside labs too",
    "note": "a key the format does not have is a problem too: compare the key set, not only required keys",
    "dtype": "nested objects have their own keys: runtime needs python, numpy, platform and dtype",
    "dpo": "each lab's entry is an object (a dict), not any value",
    "elapsed_seconds": "elapsed_seconds is a number; a string that looks like one is not",
    "failed_lab": "failed_lab and failure belong to a failed run only",
    "failure": "a failed run must say what failed: failed_lab and failure",
    "ppo": "labs holds the eight lab names of the chapter and nothing else",
}


def _report_cases() -> list[tuple[str, object, str | None, str]]:
    """(case, report, key a problem must name — None for a well-formed report, hint)."""
    good, failed, faults = _real_reports()
    damaged = [  # (case, the report it damages, the damage, the key at fault)
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
        (
            "a real report of a passing run",
            good,
            None,
            "the real report is well formed: your rules are stricter than the format",
        ),
        (
            "a real report of a failed run",
            failed,
            None,
            "a failed run's report carries failed_lab and failure, and only the labs that finished before it",
        ),
        *[(case, _damaged(report, change), key, _HINTS[key]) for case, report, change, key in damaged],
        (
            "the fault-injection report (another format)",
            faults,
            "labs",
            "the supplement's report has no scope, elapsed_seconds or labs object: it is not a mechanism-labs report",
        ),
        (
            "a list instead of a report",
            [good],
            None,
            "a report is a JSON object: check the type before looking up keys",
        ),
    ]


@exercise(
    "report_problems",
    page="notebooks/11-labs/12-the-two-reports.md",
    signature=("report",),
    kind="diagnose",
    idea="validate before you read: a damaged document deserves a list of problems, not a crash",
)
def report_problems(candidate) -> CheckResult:
    """return a list of problems (strings, each naming the key at fault; [] when well formed) with
    a mechanism-labs report's keys and nesting: status ('passed' | 'failed'), scope (str),
    timestamp_shanghai (str), runtime {python, numpy, platform, dtype}, elapsed_seconds
    (number), labs {lab name: object} — all eight labs when passed; failed_lab and failure (str)
    only when failed"""
    cases = _report_cases()
    for case, report, key, hint in cases:
        well_formed = key is None and isinstance(report, dict)
        try:
            problems = call(candidate, copy.deepcopy(report))
        except CandidateProblem as problem:
            if well_formed or "not yet implemented" in str(problem):
                raise
            return failure(
                "a damaged report crashed your function",
                where=f"case “{case}”",
                rule="a damaged report gets a list of problems, not an exception",
                got=str(problem),
                expected=f"a problem naming {key!r}" if key else "at least one problem",
                hint=hint + " — look before you index: a missing key or a value of the "
                "wrong type is a problem to report",
            )
        if not isinstance(problems, list | tuple) or not all(isinstance(p, str) for p in problems):
            raise CandidateProblem(
                "return a list of strings (one per problem, [] for a well-formed report), "
                f"got {type(problems).__name__}"
                + (" holding non-strings" if isinstance(problems, list | tuple) else "")
            )
        if well_formed and problems:
            return failure(
                "a well-formed report was rejected",
                where=f"case “{case}”",
                rule="a report labkit wrote has no problems",
                got=list(problems),
                expected=[],
                hint=hint,
            )
        if not well_formed and not problems:
            return failure(
                "a damaged report passed",
                where=f"case “{case}”",
                rule="every damaged report gets at least one problem",
                got=[],
                expected=f"a problem naming {key!r}" if key else "at least one problem",
                hint=hint,
            )
        if key is not None and not any(key in p for p in problems):
            return failure(
                "the problem does not say where",
                where=f"case “{case}”",
                rule="a problem names the key at fault",
                got=list(problems),
                expected=f"a problem naming {key!r}",
                hint="a problem should point at its place: name the key that is missing, "
                "unexpected or of the wrong kind",
            )
    return passed(
        f"all {len(cases)} reports judged right: the two real ones pass, every damaged one is caught at its key"
    )
