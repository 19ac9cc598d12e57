"""Trace one's contract (§7.16) as clauses on its events: 12 prompt IDs → KV grows one row per fed
token → processors, selection, stop → streamed bytes never taken back → no RNG → EOS or the limit."""

from labkit.core.clauses import Clause, Events, draws_nothing, first, missing


def _ids_have_positions(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return not len(p["input_ids"][0]) == len(p["position_ids"][0]) == sum(p["attention_mask"][0])

    return first(events, wrong, "input.tokenized") or missing(events, "input.tokenized")


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
    return first(events, lambda p: p["token_id"] in p["masked_ids"], "token.selected")


def _streamed_is_returned(events: Events) -> str | None:
    streamed = "".join(e["payload"]["utf8_hex"] for e in events if e["event_type"] == "stream.delta")
    return first(events, lambda p: not p["utf8_hex"].startswith(streamed), "response.completed")


def _stops_by_its_rule(events: Events) -> str | None:
    limit = events[0]["payload"]["max_output_tokens"]

    def wrong(p: dict) -> bool:
        reason = p["finish_reason"]
        return reason not in ("eos", "length") or (reason == "length") != (p["output_tokens_selected"] >= limit)

    return first(events, wrong, "response.completed") or missing(events, "response.completed", "resources.released")


def _returns_what_it_selected(events: Events) -> str | None:
    def wrong(p: dict) -> bool:
        return p["output_tokens_returned"] != p["output_tokens_selected"] - (p["finish_reason"] == "eos")

    return first(events, wrong, "response.completed")


CLAUSES = (
    Clause("initial_object", "the prompt's IDs, one position and one attended slot each", _ids_have_positions),
    Clause("model_state", "the KV cache grows by one row in every layer per fed token", _kv_grows_by_one),
    Clause("runtime_update", "the selected token is never one the processors masked", _never_masked),
    Clause("irreversible_point", "bytes streamed are returned as they were, never taken back", _streamed_is_returned),
    Clause("random_entry", "greedy selection draws no random number", lambda ev: draws_nothing(ev, "token.selected")),
    Clause("termination", "the request ends at EOS or at its token limit, then frees its slot", _stops_by_its_rule),
    Clause("replay_core", "the tokens returned are the tokens selected, EOS left out", _returns_what_it_selected),
)
