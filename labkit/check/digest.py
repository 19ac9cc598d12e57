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


_BINDING_HINTS = {
    ("happy", False): (
        "this approval carries exactly SHA-256 of the canonical (RFC 8785) JSON of this "
        "Invocation, and its decision is 'approve': it authorises the call. Compute the digest "
        "of the Invocation's whole to_json() with the book's canonical form and compare it "
        "with confirmation.invocation_digest"
    ),
    ("confirmation_mismatch", True): (
        "the Invocation presented for execution says 10:00 (inv_02), but the "
        "user approved the 09:00 one: any changed argument gives another digest, "
        "and an approval binds to its digest, not to the call in general"
    ),
    ("tampered_digest", True): (
        "the IDs agree (inv_01), but the approved digest differs from this "
        "Invocation's digest in its last hex digit: compare the whole digest, never "
        "an ID or the 19 characters shown on the card"
    ),
}


@exercise(
    "digest_matches",
    page=PAGE,
    signature=("confirmation", "invocation"),
    kind="diagnose",
    idea="an approval binds to one exact request: compare what was approved with what is about to run",
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
        verdict = reader.calls[0] if reader.calls else None
        hint = _BINDING_HINTS.get((scenario, verdict), "compare the approved digest with this Invocation's digest")
        failed = compare_traces(
            f"scenario {scenario} vs its golden trace", tools.golden(scenario), mine.events, lambda div, hint=hint: hint
        )
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
            "a confirmation authorises only when its decision is 'approve'",
        ),
        (
            "the same Invocation with its arguments in another key order",
            Confirmation("confirm_03", "inv_01", digest, "approve"),
            reordered,
            True,
            "the canonical form sorts keys, so the key order of a dict does not change the digest: "
            "hash the canonical JSON, not json.dumps of the dict as it comes",
        ),
    ]
    for case, confirmation, presented, expected, hint in cases:
        got = _Binding(candidate)(confirmation, presented)
        if got != expected:
            return failure(
                "wrong verdict", where=case, rule="binding to the digest", got=got, expected=expected, hint=hint
            )
    return passed(
        "the happy path, the 10:00 edit and the tampered digest reproduce their golden "
        "traces, and a rejected or reordered confirmation is judged right"
    )
