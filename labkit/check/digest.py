"""Exercise of page 08 (§7.12): the confirmation's binding to the Invocation digest."""

from __future__ import annotations

from labkit.check import _tools as tools
from labkit.check.core import CandidateProblem, call
from labkit.check.grading import trace

SCENARIOS = ("happy", "confirmation_mismatch", "tampered_digest")


def _binding(candidate):
    """The reader's check as the runtime's digest binding: it must answer True or False."""

    def binding(confirmation, invocation) -> bool:
        verdict = call(candidate, confirmation, invocation)
        if type(verdict).__name__ not in ("bool", "bool_"):
            raise CandidateProblem(f"digest_matches must return True or False, got {type(verdict).__name__}")
        return bool(verdict)

    return binding


def _runs():
    from labkit.tools.hooks import ToolHooks

    def run(scenario):
        return lambda piece: tools.run(scenario, ToolHooks(digest_matches=piece)).events

    return [(f"scenario {name} vs its golden trace", tools.golden(name), run(name)) for name in SCENARIOS]


def _cases():
    """Confirmations the scenarios do not reach: a rejection, a reordered Invocation."""
    from dataclasses import replace

    from labkit.tools.confirm import Confirmation, invocation_digest
    from labkit.tools.schedules import fixture_invocation

    invocation = fixture_invocation()
    digest = invocation_digest(invocation)
    reordered = replace(invocation, normalized_arguments=dict(reversed(list(invocation.normalized_arguments.items()))))
    return [
        (
            "the user pressed 'reject' on the right card",
            (Confirmation("confirm_02", "inv_01", digest, "reject"), invocation),
        ),
        (
            "the same Invocation with its arguments in another key order",
            (Confirmation("confirm_03", "inv_01", digest, "approve"), reordered),
        ),
    ]


def _reference(confirmation, invocation):
    from labkit.tools.confirm import digest_matches

    return digest_matches(confirmation, invocation)


trace(
    "digest_matches",
    "notebooks/07-traces/08-tool-proposal-to-commit.md",
    "diagnose",
    "return True exactly when the confirmation approves this Invocation: decision 'approve' and "
    "invocation_digest equal to SHA-256 of the RFC 8785 canonical JSON of invocation.to_json()",
    ("confirmation", "invocation"),
    _runs,
    hook=_binding,
    cases=_cases,
    reference=_reference,
    idea="an approval binds to one exact request: compare what was approved with what is about to run",
    rule="the decision must be an approval, and the whole digest — not an ID, not the characters a card shows — "
    "of the canonical form, whose key order never depends on how the dict was built",
)
