"""The two gates before execution: authorisation (t05) and digest-bound confirmation (t06, t07),
and the request digest of the idempotency record.  JCS is RFC 8785 (keys sorted by UTF-16 code units,
no whitespace, ECMAScript numbers, UTF-8):

    invocation_digest = SHA-256(JCS(invocation))                   (§7.12)
    request_digest    = SHA-256(JCS(invocation.normalized_arguments))   (§7.13)

A confirmation approves one digest: a changed argument makes a new Invocation, which needs a new approval.
"""

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from labkit.core.events import digest_bytes as sha256_digest  # "sha256:<64 hex>", as every digest of the book
from labkit.tools.normalize import Invocation


@dataclass(frozen=True)
class AuthorizationDecision:
    allowed: bool
    subject: str
    capability: str
    scope: str
    reason: str


def authorization_decision(
    invocation: Invocation, subject: str, capabilities: tuple[str, ...]
) -> AuthorizationDecision:
    """May ``subject``, holding ``capabilities``, execute ``invocation``: is it theirs, is
    ``calendar.write:<calendar_id>`` held, does it cover the scope ``<subject>/<calendar_id>``?"""
    calendar_id = invocation.normalized_arguments["calendar_id"]
    capability, scope = invocation.required_capability, f"{invocation.subject}/{calendar_id}"

    def decide(allowed: bool, reason: str) -> AuthorizationDecision:
        return AuthorizationDecision(allowed, subject, capability, scope, reason)

    if invocation.subject != subject:
        return decide(False, f"invocation is for {invocation.subject!r}, the caller is {subject!r}")
    if capability not in capabilities:
        return decide(False, f"{subject} lacks {capability!r}; holds {list(capabilities)}")
    if capability != f"calendar.write:{calendar_id}":
        return decide(False, f"capability {capability!r} does not cover scope {scope!r}")
    return decide(True, "subject matches, capability held, scope covered")


def canonical_json(value) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value."""
    import rfc8785

    return rfc8785.dumps(value)


def invocation_digest(invocation: Invocation) -> str:
    return sha256_digest(canonical_json(invocation.to_json()))


def request_digest(normalized_arguments: dict) -> str:
    return sha256_digest(canonical_json(normalized_arguments))


def confirmation_card(invocation: Invocation, tz_name: str) -> list[str]:
    """What the user sees, line by line: title, target calendar, the normalised time in ``tz_name``
    with its UTC offset (a wall-clock time alone names two instants in the hour a clock change
    repeats), the digest."""
    args = invocation.normalized_arguments
    start = datetime.fromisoformat(args["start"]).astimezone(ZoneInfo(tz_name))
    offset = start.strftime("%z")  # "+0800"
    return [
        f"Create event “{args['title']}” in calendar {args['calendar_id']}",
        f"When: {start:%Y-%m-%d %H:%M} UTC{offset[:3]}:{offset[3:]} ({tz_name}), {args['duration_minutes']} min",
        f"Invocation {invocation.invocation_id}, digest {invocation_digest(invocation)[:19]}…",
    ]


@dataclass(frozen=True)
class Confirmation:
    confirmation_id: str
    invocation_id: str
    invocation_digest: str
    decision: str  # "approve" or "reject"


class ConfirmationError(ValueError):
    """A confirmation that cannot authorise execution; the message says why."""


def digest_matches(confirmation: Confirmation, invocation: Invocation) -> bool:
    """The binding test: an approval whose digest is SHA-256(JCS(this Invocation))."""
    return confirmation.decision == "approve" and confirmation.invocation_digest == invocation_digest(invocation)


def check_confirmation(
    confirmation: Confirmation, invocation: Invocation, known_invocations: dict[str, Invocation], matches=None
) -> None:
    """Raise unless ``confirmation`` approves exactly ``invocation`` (by ID and digest).  A hook
    ``matches(confirmation, invocation) -> bool`` replaces the binding test below the unknown-ID check."""
    if confirmation.invocation_id not in known_invocations:
        raise ConfirmationError(
            f"confirmation {confirmation.confirmation_id} names unknown invocation {confirmation.invocation_id!r}"
        )
    if matches is not None:
        verdict = matches(confirmation, invocation)
        if type(verdict).__name__ not in ("bool", "bool_"):
            raise TypeError(f"digest_matches must return True or False, got {type(verdict).__name__}")
        if not verdict:
            check_confirmation(confirmation, invocation, known_invocations)  # the reason, when there is one
            raise ConfirmationError(
                f"confirmation {confirmation.confirmation_id} was refused by the binding test for invocation "
                f"{invocation.invocation_id}; a new confirmation is required"
            )
        return
    if confirmation.decision != "approve":
        raise ConfirmationError(
            f"confirmation {confirmation.confirmation_id} decided {confirmation.decision!r}, not 'approve'"
        )
    expected = invocation_digest(invocation)
    if confirmation.invocation_digest != expected:
        raise ConfirmationError(
            f"confirmation {confirmation.confirmation_id} approves digest {confirmation.invocation_digest[:19]}…, "
            f"but invocation {invocation.invocation_id} has {expected[:19]}…; a new confirmation is required"
        )
    if confirmation.invocation_id != invocation.invocation_id:
        raise ConfirmationError(
            f"confirmation {confirmation.confirmation_id} is for {confirmation.invocation_id}, "
            f"not {invocation.invocation_id}"
        )
