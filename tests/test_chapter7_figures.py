"""Chapter 7's figures that golden-trace equality alone held, each asserted against the
value the chapter prints, in a test named for its section (issue 30 items 1, 2, 5, 6, 7).

The runs are the real runtimes; the expected values are written as the chapter writes them.
"""

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
import rfc8785
from _helpers import CHAPTER_INVOCATION

from labkit.text.runtime import run_text_trace
from labkit.text.tokenizer import Tokenizer
from labkit.tools.calls import first_model_call
from labkit.tools.confirm import confirmation_card
from labkit.tools.faults import faulty_config
from labkit.tools.model import load_decoder
from labkit.tools.runtime import run_tool_trace
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue

PAGES = Path(__file__).resolve().parent.parent / "notebooks" / "07-traces"
H = "sha256:"  # the runtime's H: SHA-256 over RFC 8785 canonical JSON


def digest(value) -> str:
    return H + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


@pytest.fixture(scope="module")
def text_run():
    return run_text_trace()


@pytest.fixture(scope="module")
def tool_run():
    return run_tool_trace()


def test_7_2_ids_14_to_19_are_spelled_as_the_chapter_lists_them():
    tokenizer = Tokenizer.load()
    assert tokenizer.pieces[14:20] == ["短波蓝光", "的散射", "通常更强", "。", "EOS", "reserved"]
    assert {18, 19} <= tokenizer.special_ids and tokenizer.vocab_size == 20
    with pytest.raises(ValueError, match="cannot encode"):
        tokenizer.encode("EOS")  # a control token: no text encodes to it


def test_7_3_to_7_5_each_stream_delta_carries_its_tokens_utf8_bytes(text_run):
    """e06, e10, e14, e18: sequence_no t−1 and the UTF-8 bytes of the token selected at step t."""
    deltas = [e for e in text_run.events if e["event_type"] == "stream.delta"]
    chapter = [("e06", 0, 14, "短波蓝光"), ("e10", 1, 15, "的散射"), ("e14", 2, 16, "通常更强"), ("e18", 3, 17, "。")]
    got = [(e["event_id"], e["payload"]["sequence_no"], e["payload"]["token_id"]) for e in deltas]
    assert got == [row[:3] for row in chapter]
    for event, (*_, piece) in zip(deltas, chapter, strict=True):
        assert bytes.fromhex(event["payload"]["utf8_hex"]) == piece.encode("utf-8")
        assert event["payload"]["byte_length"] == len(piece.encode("utf-8"))
    completed = next(e for e in text_run.events if e["event_id"] == "e23")["payload"]
    assert (completed["sequence_no"], completed["state"]) == (4, "FINISHED")
    assert [e["payload"].get("state") for e in text_run.events].count("FINISHED") == 1  # §7.5 item 8


def test_7_7_d08_response_completed_is_finished():
    d08 = next(e for e in catalogue.golden("diffusion") if e["event_id"] == "d08")
    assert d08["event_type"] == "response.completed"
    assert d08["payload"]["commit"]["status"] == "FINISHED"
    assert d08["payload"]["image_ref"] == d08["payload"]["commit"]["image_id"]


def test_7_10_mc_02s_strategy_is_a_stated_departure(tool_run):
    """§7.10 fixes greedy_with_json_grammar for both calls; mc_02 writes no JSON, so t11 records
    greedy_with_answer_slots, and page 09 says so beside the chapter's name."""
    samplers = {
        e["event_id"]: e["payload"]["artifacts"]["sampler"]
        for e in tool_run.events
        if "artifacts" in e["payload"] and "sampler" in e["payload"]["artifacts"]
    }
    assert samplers == {"t00": "greedy_with_json_grammar", "t11": "greedy_with_answer_slots"}
    page = (PAGES / "09-tool-second-call.md").read_text(encoding="utf-8")
    paragraph = next(p for p in page.split("\n\n") if "greedy_with_json_grammar" in p)
    assert "greedy_with_answer_slots" in paragraph and "§7.10" in paragraph


def test_7_11_the_grammar_overrules_the_raw_argmax_in_24_of_27_steps(tool_run):
    steps = tool_run.first_call.decode.steps
    overruled = [s.step for s in steps if int(np.argmax(s.raw_logits)) != s.chosen_id]
    assert (len(overruled), len(steps)) == (24, 27)
    free = first_model_call(
        load_decoder(), load_toolspec(), tool_run.config.user_text, mask_for=lambda _text: np.ones(256, dtype=bool)
    )
    assert (free.decode.finish_reason, len(free.decode.token_ids)) == ("length", 64)
    assert re.fullmatch(r'已在(","带护照)+', free.decode.text), free.decode.text


def test_7_12_the_confirmation_card_shows_time_title_calendar_and_zone(tool_run):
    """The card shows the normalised time, the title, the target calendar and the time zone,
    and the digest of the Invocation: H(canonical invocation inv_01)."""
    card = confirmation_card(tool_run.invocation, "Asia/Shanghai")
    assert card == [
        "Create event “带护照” in calendar primary",
        "When: 2026-07-20 09:00 UTC+08:00 (Asia/Shanghai), 10 min",
        f"Invocation inv_01, digest {digest(CHAPTER_INVOCATION)[:19]}…",
    ]
    t06 = next(e for e in tool_run.events if e["event_id"] == "t06")["payload"]
    assert t06["card"] == card and t06["invocation_digest"] == digest(CHAPTER_INVOCATION)


def test_7_13_t08_request_digest_is_h_of_the_normalized_arguments(tool_run):
    t08 = next(e for e in tool_run.events if e["event_id"] == "t08")["payload"]
    assert t08["request_digest"] == digest(CHAPTER_INVOCATION["normalized_arguments"])
    assert t08["idempotency_key"] == "req-42:create-event:1"


def test_7_15_an_exhausted_retry_budget_ends_failed_without_mc_02():
    """Page 09 says the runtime does not call the model after the budget runs out; the run agrees."""
    trace = run_tool_trace(faulty_config("retry_budget_exhausted"))
    calls = {e["payload"].get("model_call_id") for e in trace.events if e["event_type"] == "model.started"}
    assert calls == {"mc_01"} and trace.second_call is None and trace.answer is None
    last = trace.events[-1]
    assert (last["event_id"], last["event_type"], last["payload"]["state"]) == ("t15", "trace.closed", "FAILED")


def test_7_15_extra_field_is_carried_from_the_first_event_that_holds_it(tool_run):
    """§7.15's first branch: the model's bytes are clean (t01), the runtime then holds a proposal with
    notify_all (t02 records it), t03 rejects it, and t02 is where the run first parts from the golden one."""
    trace = run_tool_trace(faulty_config("extra_field"))
    happy = {e["event_id"]: e["payload"] for e in tool_run.events}
    faulty = {e["event_id"]: e for e in trace.events}
    assert faulty["t01"]["payload"]["arguments_utf8_hex"] == happy["t01"]["arguments_utf8_hex"]
    assert "notify_all" not in bytes.fromhex(happy["t01"]["arguments_utf8_hex"]).decode("utf-8")
    assert faulty["t02"]["payload"]["keys"] == [*happy["t02"]["keys"], "notify_all"]
    assert (faulty["t03"]["event_type"], faulty["t03"]["payload"]["state"]) == (
        "schema.rejected",
        "VALIDATION_REJECTED",
    )
    found = catalogue.diagnose("tool", "extra_field")
    assert (found.event_ids, found.rule, found.field) == (("t02", "t02"), "discrete_state", "keys (length)")
