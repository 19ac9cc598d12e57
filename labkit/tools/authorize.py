"""Authorisation (t05): the subject, its capabilities and the scope the Invocation touches.

Allowed iff the Invocation is for this subject, the subject holds the required capability
(``calendar.write:<calendar_id>``) and the scope ``<subject>/<calendar_id>`` is one the
tool may write.  The decision names the check that failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.tools.normalize import Invocation


@dataclass(frozen=True)
class Principal:
    subject: str
    capabilities: tuple[str, ...]


@dataclass(frozen=True)
class AuthorizationDecision:
    allowed: bool
    subject: str
    capability: str
    scope: str
    reason: str


def scope_of(invocation: Invocation) -> str:
    return f"{invocation.subject}/{invocation.normalized_arguments['calendar_id']}"


def authorize(invocation: Invocation, principal: Principal) -> AuthorizationDecision:
    capability, scope = invocation.required_capability, scope_of(invocation)

    def decide(allowed: bool, reason: str) -> AuthorizationDecision:
        return AuthorizationDecision(allowed, principal.subject, capability, scope, reason)

    if invocation.subject != principal.subject:
        return decide(False, f"invocation is for {invocation.subject!r}, the caller is {principal.subject!r}")
    if capability not in principal.capabilities:
        return decide(False, f"{principal.subject} lacks {capability!r}; holds {list(principal.capabilities)}")
    if capability != f"calendar.write:{invocation.normalized_arguments['calendar_id']}":
        return decide(False, f"capability {capability!r} does not cover scope {scope!r}")
    return decide(True, "subject matches, capability held, scope covered")
