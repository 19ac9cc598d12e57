"""§7.16–7.17 as a check: a trace against its kind's state/update/terminal contract.

§7.17 compares two traces by asking, before any value, whether each kind's contract — the seven
rows of the §7.16 table — is kept. Each row is checked here by one or two *clauses* read off the
events alone (no golden trace, no second run): ``check_contract(kind, events)`` returns the broken
clauses in row order, each naming the row, what the clause says and the first event that breaks it.

    text       12 prompt IDs → KV grows one row per fed token → processors, selection, stop
               → streamed bytes never taken back → no RNG (greedy) → EOS or the length limit
    diffusion  condition + initial noise → one whole latent per timestep → CFG + DDIM (ᾱ_prev chains)
               → publish after decode → RNG only at the initial latent → the schedule runs out
    tool       messages + ToolSpec → two model calls, each its own cache → parse … execute in order
               → one external commit, only after an approval that matches → no RNG in decoding
               → the second call ends after the result is observed
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Events = list[dict]


@dataclass(frozen=True)
class Clause:
    row: str  # the §7.16 row (a TraceContract attribute)
    says: str
    broken_at: Callable[[Events], str | None]  # the first event that breaks it (its ID), or None


@dataclass(frozen=True)
class Breach:
    row: str
    says: str
    event_id: str

    def __str__(self) -> str:
        return f"{self.row}: {self.says} — broken at {self.event_id}"


def _first(events: Events, wrong: Callable[[dict], bool], kind: str | None = None) -> str | None:
    """The ID of the first event (of type ``kind``) for which ``wrong`` holds."""
    return next((e["event_id"] for e in events if kind in (None, e["event_type"]) and wrong(e["payload"])), None)


def _types(events: Events) -> list[str]:
    return [e["event_type"] for e in events]


def _missing(events: Events, *wanted: str) -> str | None:
    """``"(missing …)"`` for the first of ``wanted`` the trace lacks, else None."""
    return next((f"(missing {t})" for t in wanted if t not in _types(events)), None)


def _out_of_order(events: Events, order: tuple[str, ...]) -> str | None:
    """The first event of ``order``'s types that comes before one listed earlier."""
    seen = -1
    for event in events:
        if event["event_type"] in order:
            rank = order.index(event["event_type"])
            if rank < seen:
                return event["event_id"]
            seen = rank
    return None


# -- text ------------------------------------------------------------------------------------------


def _ids_have_positions(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return not len(p["input_ids"][0]) == len(p["position_ids"][0]) == sum(p["attention_mask"][0])

    return _first(events, wrong, "input.tokenized") or _missing(events, "input.tokenized")


def _kv_grows_by_one(events: Events) -> str | None:
    length = None
    for event in events:
        payload = event["payload"]
        if event["event_type"] == "prefill.completed":
            length = payload["cache_length"]
        elif event["event_type"] == "decode.completed":
            if payload["new_cache_length"] != length + 1 or set(payload["cache_lengths"]) != {length + 1}:
                return event["event_id"]
            length += 1
    return None


def _never_masked(events: Events) -> str | None:
    return _first(events, lambda p: p["token_id"] in p["masked_ids"], "token.selected")


def _streamed_is_returned(events: Events) -> str | None:
    streamed = "".join(e["payload"]["utf8_hex"] for e in events if e["event_type"] == "stream.delta")
    return _first(events, lambda p: not p["utf8_hex"].startswith(streamed), "response.completed")


def _draws_nothing(events: Events, kind: str) -> str | None:
    return _first(events, lambda p: "rng" in p and p["rng"]["counter_after"] != p["rng"]["counter_before"], kind)


def _stops_by_its_rule(events: Events) -> str | None:
    limit = events[0]["payload"]["max_output_tokens"]

    def wrong(p: dict) -> bool:
        reason = p["finish_reason"]
        return reason not in ("eos", "length") or (reason == "length") != (p["output_tokens_selected"] >= limit)

    return _first(events, wrong, "response.completed") or _missing(events, "response.completed", "resources.released")


def _returns_what_it_selected(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return p["output_tokens_returned"] != p["output_tokens_selected"] - (p["finish_reason"] == "eos")

    return _first(events, wrong, "response.completed")


TEXT = (
    Clause("initial_object", "the prompt's IDs, one position and one attended slot each", _ids_have_positions),
    Clause("model_state", "the KV cache grows by one row in every layer per fed token", _kv_grows_by_one),
    Clause("runtime_update", "the selected token is never one the processors masked", _never_masked),
    Clause("irreversible_point", "bytes streamed are returned as they were, never taken back", _streamed_is_returned),
    Clause("random_entry", "greedy selection draws no random number", lambda ev: _draws_nothing(ev, "token.selected")),
    Clause("termination", "the request ends at EOS or at its token limit, then frees its slot", _stops_by_its_rule),
    Clause("replay_core", "the tokens returned are the tokens selected, EOS left out", _returns_what_it_selected),
)


# -- diffusion -------------------------------------------------------------------------------------


def _condition_then_noise(events: Events) -> str | None:
    order = ("condition.encoded", "latent.initialized")
    return _out_of_order(events, order) or _missing(events, *order)


def _noisiest_first(events: Events) -> str | None:
    steps = [e for e in events if e["event_type"] == "denoise.updated"]
    pairs = zip(steps, steps[1:], strict=False)
    return next((b["event_id"] for a, b in pairs if b["payload"]["timestep"] >= a["payload"]["timestep"]), None)


def _alpha_bars_chain(events: Events) -> str | None:
    steps = [e for e in events if e["event_type"] == "denoise.updated"]
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        wanted = 1.0 if after is None else after["payload"]["alpha_bar_t"]
        if step["payload"]["alpha_bar_prev"] != wanted:
            return step["event_id"]
    return None


def _published_after_decode(events: Events) -> str | None:
    return _out_of_order(events, ("denoise.updated", "vae.decoded", "image.encoded", "response.completed"))


def _noise_only_where_sigma(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return p["rng"]["counter_after"] != p["rng"]["counter_before"] and p["sigma"] == 0.0

    return _first(events, wrong, "denoise.updated")


def _schedule_runs_out(events: Events) -> str | None:
    planned = [e["payload"]["scheduler"]["timesteps"] for e in events if e["event_type"] == "latent.initialized"]
    visited = [e["payload"]["timestep"] for e in events if e["event_type"] == "denoise.updated"]
    if not planned or visited != planned[0]:
        return next((e["event_id"] for e in events if e["event_type"] == "denoise.updated"), "(no denoise step)")
    return _missing(events, "vae.decoded")


def _seed_and_schedule_recorded(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return not (isinstance(p["seed"], int) and p["latent_shape"] and p["scheduler"]["timesteps"])

    return _first(events, wrong, "latent.initialized") or _missing(events, "latent.initialized")


DIFFUSION = (
    Clause("initial_object", "the condition is encoded before the initial noise is drawn", _condition_then_noise),
    Clause("model_state", "every step updates the whole latent at one timestep, noisiest first", _noisiest_first),
    Clause("runtime_update", "each step's ᾱ_prev is the next step's ᾱ_t (the last: 1)", _alpha_bars_chain),
    Clause("irreversible_point", "the image is published only after the latent is decoded", _published_after_decode),
    Clause("random_entry", "only the initial latent draws random numbers (η = 0)", _noise_only_where_sigma),
    Clause("termination", "the loop ends when the planned timesteps run out", _schedule_runs_out),
    Clause("replay_core", "the seed, the latent's shape and the schedule are recorded", _seed_and_schedule_recorded),
)


# -- tool ------------------------------------------------------------------------------------------

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
    seen = set()
    for event in (e for e in events if e["event_type"] == "model.started"):
        if event["payload"]["model_call_id"] in seen:
            return event["event_id"]
        seen.add(event["payload"]["model_call_id"])
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
        observed = "result.encoded" in _types(events[:index])
        if not observed or str(event["payload"]["finish_reason"]).lower() not in ("eos", "length"):
            return event["event_id"]
    return None


def _closes_on_the_commit(events: Events) -> str | None:
    commits = [e["payload"]["commit"] for e in events if e["event_type"] == "external.committed"]
    for closed in (e for e in events if e["event_type"] == "trace.closed"):
        held = closed["payload"]
        # an outcome the runtime never learned (t09 unknown) is the calendar's to tell, not the trace's
        if commits and (
            held["external_commit"] is not True or held["commit"]["events_for_key"] != [commits[-1]["event_id"]]
        ):
            return closed["event_id"]
    return None


TOOL = (
    Clause(
        "initial_object", "the first model call starts from the messages and the ToolSpec", _starts_from_the_messages
    ),
    Clause("model_state", "each model call has its own ID and cache", _calls_have_their_own_ids),
    Clause(
        "runtime_update",
        "parse, validate, normalise, authorise, confirm, execute — in order",
        lambda ev: _out_of_order(ev, STAGES),
    ),
    Clause(
        "irreversible_point", "one external commit at most, only after an approval that matches", _commit_after_approval
    ),
    Clause("random_entry", "decoding draws no random number", lambda ev: _draws_nothing(ev, "model.started")),
    Clause("termination", "the answer comes after the result is observed and ends by its rule", _answer_after_result),
    Clause(
        "replay_core",
        "the trace closes on the commit the service reported, one event for its key",
        _closes_on_the_commit,
    ),
)

CLAUSES: dict[str, tuple[Clause, ...]] = {"text": TEXT, "diffusion": DIFFUSION, "tool": TOOL}


def check_contract(kind: str, events: Events) -> list[Breach]:
    """Every clause of ``kind``'s contract that ``events`` break, in the §7.16 row order."""
    if kind not in CLAUSES:
        raise ValueError(f"kind must be one of {sorted(CLAUSES)}, got {kind!r}")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ValueError(f"events must be a list of event dicts, got {type(events).__name__}")
    breaches = []
    for clause in CLAUSES[kind]:
        try:
            where = clause.broken_at(events)
        except (KeyError, TypeError, IndexError, AttributeError) as missing:  # a field the clause reads is gone
            where = f"(unreadable: {type(missing).__name__} {missing})"
        if where is not None:
            breaches.append(Breach(clause.row, clause.says, where))
    return breaches
