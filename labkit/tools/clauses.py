"""Trace three's contract (§7.16) as clauses on its events: messages + ToolSpec → two model calls,
each its own cache → parse … execute in order → one external commit, only after an approval that
matches → no RNG in decoding → the second call ends after the result is observed."""

from labkit.core.clauses import Clause, Events, draws_nothing, out_of_order, types

#: the runtime's stages, in the only order they may come
STAGES = (
    "proposal.parsed",
    "schema.validated",
    "invocation.normalized",
    "authorization.allowed",
    "confirmation.approved",
    "invocation.started",
    "external.committed",
)


def _starts_from_the_messages(events: Events) -> str | None:
    if not events:
        return "(no event)"
    return None if events[0]["event_type"] == "model.started" else events[0]["event_id"]


def _calls_have_their_own_ids(events: Events) -> str | None:
    seen = set()  # the model call IDs so far; the first event repeating one is named
    for event in (e for e in events if e["event_type"] == "model.started"):
        call_id = event["payload"]["model_call_id"]
        if call_id in seen:
            return event["event_id"]
        seen.add(call_id)
    return None


def _commit_after_approval(events: Events) -> str | None:
    approved = [e["payload"] for e in events if e["event_type"] == "confirmation.approved"]
    matched = bool(approved) and approved[-1].get("digest_matches") is True
    commits = [e["event_id"] for e in events if e["event_type"] == "external.committed"]
    if commits and not matched:
        return commits[0]
    return commits[1] if len(commits) > 1 else None


def _answer_after_result(events: Events) -> str | None:
    for index, event in enumerate(events):
        if event["event_type"] != "response.completed":
            continue
        observed = "result.encoded" in types(events[:index])
        if not observed or str(event["payload"]["finish_reason"]).lower() not in ("eos", "length"):
            return event["event_id"]
    return None


def _closes_on_the_commit(events: Events) -> str | None:
    commits = [e["payload"]["commit"]["event_id"] for e in events if e["event_type"] == "external.committed"]
    for closed in (e for e in events if e["event_type"] == "trace.closed"):
        held = closed["payload"]
        # an outcome the runtime never learned (t09 unknown) is the calendar's to tell, not the trace's
        if commits and (held["external_commit"] is not True or held["commit"]["events_for_key"] != commits[-1:]):
            return closed["event_id"]
    return None


CLAUSES = (
    Clause(
        "initial_object", "the first model call starts from the messages and the ToolSpec", _starts_from_the_messages
    ),
    Clause("model_state", "each model call has its own ID and cache", _calls_have_their_own_ids),
    Clause(
        "runtime_update",
        "parse, validate, normalise, authorise, confirm, execute — in order",
        lambda ev: out_of_order(ev, STAGES),
    ),
    Clause(
        "irreversible_point", "one external commit at most, only after an approval that matches", _commit_after_approval
    ),
    Clause("random_entry", "decoding draws no random number", lambda ev: draws_nothing(ev, "model.started")),
    Clause("termination", "the answer comes after the result is observed and ends by its rule", _answer_after_result),
    Clause(
        "replay_core",
        "the trace closes on the commit the service reported, one event for its key",
        _closes_on_the_commit,
    ),
)
