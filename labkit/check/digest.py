"""Exercise of page 08 (§7.12): the confirmation's binding to the Invocation digest."""

from __future__ import annotations

from labkit.check import _tools as tools
from labkit.check._support import Recorder, compare_traces
from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, passed

PAGE = "notebooks/07-traces/08-tool-proposal-to-commit.md"


class _Binding(Recorder):
    """The reader's check as the runtime's digest binding; ``calls`` keeps its verdicts."""

    def __call__(self, confirmation, invocation) -> bool:
        verdict = call(self.candidate, confirmation, invocation)
        if type(verdict).__name__ not in ("bool", "bool_"):
            raise CandidateProblem(
                f"digest_matches must return True or False, got {type(verdict).__name__} {verdict!r}"
            )
        self.calls.append(bool(verdict))
        return bool(verdict)


@exercise(
    "digest_matches",
    page=PAGE,
    signature=("confirmation", "invocation"),
    kind="diagnose",
    idea="an approval binds to one exact request: compare what was approved with what is about to run",
    rule="the decision must be an approval, and the whole digest — not an ID, not the characters a card shows — "
    "of the canonical form, whose key order never depends on how the dict was built",
)
def check_digest_matches(candidate) -> CheckResult:
    """return True exactly when the confirmation approves this Invocation: decision 'approve' and
    invocation_digest equal to SHA-256 of the RFC 8785 canonical JSON of invocation.to_json()"""
    from dataclasses import replace

    from labkit.tools.confirm import Confirmation, invocation_digest
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.schedules import fixture_invocation

    for scenario in ("happy", "confirmation_mismatch", "tampered_digest"):
        reader = _Binding(candidate)
        mine = tools.run(scenario, ToolHooks(digest_matches=reader))
        failed = compare_traces(f"scenario {scenario} vs its golden trace", tools.golden(scenario), mine.events)
        if failed is not None:
            return failed
    # cases the scenarios do not reach
    invocation = fixture_invocation()
    digest = invocation_digest(invocation)
    reordered = replace(invocation, normalized_arguments=dict(reversed(list(invocation.normalized_arguments.items()))))
    cases = [
        (
            "the user pressed 'reject' on the right card",
            Confirmation("confirm_02", "inv_01", digest, "reject"),
            invocation,
            False,
        ),
        (
            "the same Invocation with its arguments in another key order",
            Confirmation("confirm_03", "inv_01", digest, "approve"),
            reordered,
            True,
        ),
    ]
    for case, confirmation, presented, expected in cases:
        got = _Binding(candidate)(confirmation, presented)
        if got != expected:
            return failure("wrong verdict", where=case, rule="binding to the digest", got=got, expected=expected)
    return passed(
        "the happy path, the 10:00 edit and the tampered digest reproduce their golden "
        "traces, and a rejected or reordered confirmation is judged right"
    )
