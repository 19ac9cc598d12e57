"""The phases of one run of trace three, one function per group of events (t00–t14): here
the proposal up to the confirmation (t00–t07) and ``PHASES``, the order of all of them (the
phases at and after the commit boundary are ``labkit.tools.commit_phases``).

``labkit.tools.runtime.run_tool_trace`` runs ``PHASES`` in order on one ``ToolTrace``; each
phase records its events and returns None to go on, or the request status the run ends with
(``close_trace`` then records ``trace.closed``).  A page can ``show_source`` one phase.
"""

from __future__ import annotations

from labkit.tools.authorize import Principal, authorize
from labkit.tools.calls import first_model_call, model_started_payload
from labkit.tools.commit_phases import answer, cancel_after_commit, execute, observe
from labkit.tools.confirm import (
    Confirmation,
    ConfirmationError,
    check_confirmation,
    confirmation_card,
    invocation_digest,
)
from labkit.tools.normalize import normalize
from labkit.tools.run_state import ToolTrace
from labkit.tools.states import State
from labkit.tools.validate import ProposalError, parse_arguments, validate_arguments


def _cut_short(raw: bytes, how: str | None) -> bytes:
    """The bytes the parser receives: the decoder's own, or (``not_json``) their first half."""
    return raw[: len(raw) // 2] if how == "not_json" else raw


def _merged(arguments: dict, how: str | None) -> dict:
    """The arguments the runtime holds once parsed: the parser's, or (``extra_field``) those with
    a ``notify_all`` injected after decoding — past the grammar, which only shaped the bytes."""
    return {**arguments, "notify_all": True} if how == "extra_field" else arguments


def propose(run: ToolTrace) -> None:
    """t00–t01, mc_01: prefill the prompt, decode the arguments under the grammar mask."""
    rec, config = run.rec, run.config
    first = first_model_call(run.decoder, run.spec, config.user_text, run.hooks.proposal_mask)
    run.first_call = first
    rec.emit("model runtime", "model.started", 0, model_started_payload(first, run.artifacts))
    generated = first.decode.text.encode("utf-8")
    run.arguments_bytes = _cut_short(generated, config.proposal_tamper)
    steps = first.decode.steps
    rec.emit(
        "decoder",
        "proposal.generated",
        len(steps),
        {
            "model_call_id": "mc_01",
            "proposal_id": "p_01",
            "state": run.state,
            "generated_tokens": len(steps),
            "token_ids": list(first.decode.token_ids),
            "allowed_counts": [s.allowed_count for s in steps],
            "forced_steps": sum(s.forced for s in steps),
            "arguments_utf8_hex": generated.hex(),
            "finish_reason": first.decode.finish_reason,
            "final_cache_length": first.cache.length,
        },
    )


def parse(run: ToolTrace) -> str | None:
    """t02: the proposal's bytes parse as one JSON object, or the proposal is rejected."""
    try:
        run.arguments = _merged(parse_arguments(run.arguments_bytes), run.config.proposal_tamper)
    except ProposalError as exc:
        received = run.arguments_bytes.hex()
        run.enter(State.PARSE_REJECTED, "JSON parser", "proposal.rejected", received_utf8_hex=received, reason=str(exc))
        return "rejected"
    run.move(State.PARSED)
    run.rec.emit(
        "JSON parser", "proposal.parsed", None, {"proposal_id": "p_01", "state": run.state, "keys": list(run.arguments)}
    )
    return None


def validate(run: ToolTrace) -> str | None:
    """t03: the arguments against the ToolSpec's JSON Schema."""
    report = validate_arguments(run.spec, run.arguments)
    checked = {"validator": report.validator, "format_checker": report.format_checker}
    if not report.valid:
        found = {"keys": list(run.arguments), **checked, "errors": [list(e) for e in report.errors]}
        run.enter(State.VALIDATION_REJECTED, "validator", "schema.rejected", **found)
        return "rejected"
    run.enter(State.VALIDATED, "validator", "schema.validated", **checked, errors=[])
    return None


def normalise(run: ToolTrace) -> None:
    """t04: the Invocation, in absolute time; from here on the journal records every state."""
    config = run.config
    invocation = normalize(
        run.spec,
        run.arguments,
        invocation_id="inv_01",
        clock=config.clock,
        tz_name=config.timezone,
        subject=config.subject,
    )
    run.invocation = invocation
    run.machine.attach(run.journal, invocation.to_json(), config.retry_budget)
    run.report(
        "normalizer",
        "invocation.normalized",
        invocation_id=invocation.invocation_id,
        reference_clock=config.clock,
        timezone=config.timezone,
        invocation=invocation.to_json(),
    )


def authorise(run: ToolTrace) -> str | None:
    """t05: may this subject do this, on this calendar?"""
    decision = authorize(run.invocation, Principal(run.config.subject, run.config.capabilities))
    auth = {"subject": decision.subject, "capability": decision.capability, "scope": decision.scope}
    if not decision.allowed:
        run.enter(State.AUTHORIZATION_DENIED, "authorizer", "authorization.denied", **auth, reason=decision.reason)
        return "denied"
    run.enter(State.AUTHORIZED, "authorizer", "authorization.allowed", **auth, reason=decision.reason)
    return None


def confirm(run: ToolTrace) -> str | None:
    """t06–t07: the user approves a card bound to the Invocation's digest; the Invocation
    presented for execution must be the one approved."""
    config, invocation = run.config, run.invocation
    digest = invocation_digest(invocation)
    card = confirmation_card(invocation, config.timezone).lines()
    run.enter(
        State.PREPARED,
        "confirmation",
        "confirmation.requested",
        invocation_id=invocation.invocation_id,
        invocation_digest=digest,
        card=card,
    )
    approved = digest if not config.tamper_digest else _flip_last_hex(digest)
    confirmation = run.confirmation = Confirmation("confirm_01", invocation.invocation_id, approved, "approve")
    known, run.presented = {invocation.invocation_id: invocation}, invocation
    if config.edit_after_approval:
        run.presented = invocation.with_arguments("inv_02", **dict(config.edit_after_approval))
        known[run.presented.invocation_id] = run.presented
    decided = {"confirmation_id": confirmation.confirmation_id, "decision": confirmation.decision}
    try:
        check_confirmation(confirmation, run.presented, known, matches=run.hooks.digest_matches)
    except ConfirmationError as exc:
        run.enter(
            State.CONFIRMATION_REJECTED,
            "confirmation",
            "confirmation.rejected",
            **decided,
            approved_digest=confirmation.invocation_digest,
            presented_invocation_id=run.presented.invocation_id,
            presented_digest=invocation_digest(run.presented),
            digest_matches=False,
            reason=str(exc),
        )
        return "needs_new_confirmation"
    approval = {"invocation_digest": confirmation.invocation_digest, "digest_matches": True}
    run.report("confirmation", "confirmation.approved", **decided, **approval)
    return None


def cancel_before_execute(run: ToolTrace) -> str | None:
    """A cancel that arrives before the execution: nothing was sent, nothing exists."""
    if not run.config.cancel_before_execute:
        return None
    run.enter(State.CANCELLED, "runtime", "request.cancelled", side_effect=False)
    return "cancelled"


#: the phases of a run, in event order (``run_tool_trace`` runs them until one ends the request)
PHASES = (
    propose,
    parse,
    validate,
    normalise,
    authorise,
    confirm,
    cancel_before_execute,
    execute,
    cancel_after_commit,
    observe,
    answer,
)
#: the phases from an Invocation to its observed result (what ``labkit.tools.schedules`` runs)
EXECUTION = PHASES[PHASES.index(authorise) : PHASES.index(answer)]


def _flip_last_hex(digest: str) -> str:
    last = digest[-1]
    return digest[:-1] + ("0" if last != "0" else "1")
