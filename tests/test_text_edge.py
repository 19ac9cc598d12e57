"""Trace one at the streaming edge (issue 45): stop strings across tokens, a split character,
a client that disconnects.  Each variant: its golden trace, its assertions, its first divergence."""

from __future__ import annotations

import pytest

from labkit.core.events import read_jsonl
from labkit.core.fixtures import fixtures_root
from labkit.text.assertions import check_reproduction
from labkit.text.runtime import run_text_trace
from labkit.text.streamer import Streamer, complete_prefix_length
from labkit.text.variants import VARIANTS, check_variant
from labkit.trace.divergence import first_divergence

BASE_TEXT = "短波蓝光的散射通常更强。"


@pytest.fixture(scope="module")
def base():
    return run_text_trace()


@pytest.fixture(scope="module")
def runs():
    return {name: run_text_trace(v.config()) for name, v in VARIANTS.items()}


def _deltas(run) -> list[dict]:
    return [e["payload"] for e in run.events if e["event_type"] == "stream.delta"]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_matches_its_golden_trace(runs, name):
    assert runs[name].events == read_jsonl(fixtures_root() / "traces" / f"text-{name}.jsonl")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_first_divergence_from_trace_one_is_the_declared_one(base, runs, name):
    found = first_divergence(base.events, runs[name].events)
    assert found is not None and VARIANTS[name].first_divergence.matches(found.at), found


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_passes_its_own_assertions(runs, name):
    failed = [(check, detail) for check, ok, detail in check_variant(name, runs[name]) if not ok]
    assert not failed


def test_the_base_run_keeps_every_byte_and_no_hold_keys(base):
    assert base.returned_bytes.decode() == BASE_TEXT and all(
        set(d) == {"sequence_no", "token_id", "utf8_hex", "byte_length"} for d in _deltas(base)
    )


def test_stop_inside_token_returns_what_precedes_the_stop_and_holds_one_character(runs):
    run = runs["stop_inside_token"]
    assert run.returned_bytes.decode() == "短波蓝" and run.finish_reason == "stop"
    assert [d["held_back"] for d in _deltas(run)] == ["光"]  # len("光的") − 1 = 1 character
    (stop,) = [e["payload"] for e in run.events if e["event_type"] == "stop.matched"]
    assert bytes.fromhex(stop["discarded_utf8_hex"]).decode() == "光的散射"  # the held 光 and the rest of token 15
    assert run.selected == [14, 15] and run.cache_final_length == 13  # no decode after the stop


def test_length_with_stop_flushes_the_held_characters(runs):
    run = runs["length_with_stop"]
    deltas = _deltas(run)
    assert run.finish_reason == "length" and run.returned_bytes.decode() == "短波蓝光的散射通常更强"
    assert [d["held_back"] for d in deltas[:-1]] == ["蓝光", "散射", "更强"]
    assert deltas[-1]["token_id"] is None and bytes.fromhex(deltas[-1]["utf8_hex"]).decode() == "更强"


def test_split_character_waits_for_the_whole_character(base, runs):
    run = runs["split_character"]
    deltas = _deltas(run)
    assert run.selected == base.selected and run.returned_bytes == base.returned_bytes  # same text, other deltas
    assert bytes.fromhex(deltas[0]["utf8_hex"]).decode() == "短波" and deltas[0]["pending_utf8_hex"] == "e893"
    assert bytes.fromhex(deltas[1]["utf8_hex"]).decode() == "蓝光的散射" and deltas[1]["pending_utf8_hex"] == ""
    assert [check for check, ok, _ in check_reproduction(run) if not ok] == []  # §7.5's eight hold too


def test_disconnect_aborts_before_the_next_decode_and_releases_once(base, runs):
    run = runs["disconnect_after_two_deltas"]
    types = [e["event_type"] for e in run.events]
    assert types[-4:] == ["stream.delta", "client.disconnected", "request.aborted", "resources.released"]
    assert types.count("resources.released") == 1 and run.finish_reason == "abort"
    assert run.returned_bytes == b"".join(bytes.fromhex(d["utf8_hex"]) for d in _deltas(base)[:2])
    released = [e["payload"] for e in run.events if e["event_type"] == "resources.released"][0]
    assert released["cache_final_length"] == 13  # the prompt and y1: y2 was selected and sent, never decoded


@pytest.mark.parametrize(
    ("data", "whole"),
    [(b"", 0), (b"a", 1), (b"\xe8", 0), (b"\xe8\x93", 0), (b"\xe8\x93\x9d", 3), (b"ab\xc3", 2), (b"\xf0\x9f\x98", 0)],
)
def test_complete_prefix_length_stops_before_an_unfinished_character(data, whole):
    assert complete_prefix_length(data) == whole


def test_streamer_refuses_tokens_after_a_stop_and_empty_stops():
    streamer = Streamer(("ab",))
    assert streamer.push(b"xab").stop == "ab"
    with pytest.raises(ValueError, match="stopped"):
        streamer.push(b"c")
    with pytest.raises(ValueError, match="stop_sequences"):
        Streamer(("",))


def test_disconnect_after_deltas_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="disconnect_after_deltas"):
        run_text_trace(VARIANTS["disconnect_after_two_deltas"].config().replace(disconnect_after_deltas=0))
