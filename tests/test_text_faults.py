"""Trace one's faults against the golden run: what each changes and where it first shows (§7.5).

Where a fault first shows is found by ``labkit.trace.divergence.first_divergence`` (§7.17);
``tests/test_catalogue.py`` checks every fault's declared ``expected`` against it, and the
tests here check the evidence around it: the inputs before it are equal, the raw logits
beside a changed selection are equal, the token behind changed bytes is the same.
"""

from __future__ import annotations

import pytest

from labkit.core import faults as suspects
from labkit.text.faults import FAULTS
from labkit.text.runtime import TextTraceConfig, run_text_trace
from labkit.trace.divergence import first_divergence
from labkit.trace.kinds import kind, run_kind


def diverges_at(golden: list[dict], faulty: list[dict]) -> tuple[str, str, str] | None:
    """(event_id, rule, field) of the first divergence, or None for identical traces."""
    found = first_divergence(golden, faulty)
    return None if found is None else (found.at.event_id, found.rule, found.field)


@pytest.fixture(scope="module")
def golden():
    return run_text_trace().events


def faulty_run(name):
    return run_kind("text", name)


def event(events, event_id):
    return next(e for e in events if e["event_id"] == event_id)


def raw_values(e):
    return e["payload"]["tensors"]["raw_logits"]["values"]


def test_the_catalogue_has_at_least_five_faults_and_each_changes_the_config():
    assert len(FAULTS) >= 5
    for name in FAULTS:
        assert kind("text").faulty_config(name) != TextTraceConfig(), f"fault {name} leaves the configuration unchanged"


def test_declared_suspects_follow_the_section_7_5_rules():
    for fault in FAULTS.values():
        at = fault.expected
        expected = (
            suspects.MODEL_PATH
            if at.rule == "tensors"
            else suspects.DETOKENIZER
            if at.event_id == "e06"
            else suspects.PROCESSORS
        )
        assert at.suspect == expected, f"{fault.name}: suspect {at.suspect!r}, §7.5 says {expected!r}"


def test_golden_run_against_itself_is_identical(golden):
    assert diverges_at(golden, run_text_trace().events) is None


def test_perturbed_weight_first_shows_in_e04_logits_with_identical_inputs(golden):
    faulty = faulty_run("perturbed_weight").events
    assert diverges_at(golden, faulty)[:2] == ("e04", "tensors")
    assert diverges_at(golden, faulty)[2].startswith("tensors.raw_logits")
    assert golden[:4] == faulty[:4], "e00–e03 (the inputs) must be identical"
    assert event(golden, "e02")["payload"]["input_ids"] == event(faulty, "e02")["payload"]["input_ids"]


@pytest.mark.parametrize("name, where", [("reset_rope_position", "e08"), ("copy_layer0_cache_to_layer1", "e12")])
def test_decode_path_faults_first_show_in_decode_logits_after_a_correct_prefill(golden, name, where):
    faulty = faulty_run(name).events
    event_id, rule, field = diverges_at(golden, faulty)
    assert (event_id, rule) == (where, "tensors") and field.startswith("tensors.raw_logits"), field
    assert raw_values(event(golden, "e04")) == raw_values(event(faulty, "e04")), "prefill must be unaffected"


@pytest.mark.parametrize(
    "name, key",
    [
        ("wrong_processor_order", "processor_order"),
        ("eos_before_minimum_length", "masked_ids"),
        ("eos_in_control_mask", "masked_ids"),
        ("tie_break_last_index", "tie_break"),
    ],
)
def test_processor_faults_first_show_at_token_selected_with_equal_raw_logits(golden, name, key):
    faulty = faulty_run(name).events
    event_id, rule, field = diverges_at(golden, faulty)
    assert (event_id, rule) == ("e05", "discrete_state") and field.startswith(key), field
    a, b = event(golden, "e05"), event(faulty, "e05")
    assert a["event_type"] == "token.selected"
    assert raw_values(a) == raw_values(b), f"{name}: raw logits at e05 must be equal"
    assert raw_values(event(golden, "e04")) == raw_values(event(faulty, "e04"))


def test_eos_in_control_mask_changes_the_selected_id_at_step_5_with_equal_raw_logits(golden):
    run = faulty_run("eos_in_control_mask")
    selected = [e for e in run.events if e["event_type"] == "token.selected"]
    reference = [e for e in golden if e["event_type"] == "token.selected"]
    first = next(
        i
        for i, (a, b) in enumerate(zip(reference, selected, strict=False))
        if a["payload"]["token_id"] != b["payload"]["token_id"]
    )
    a, b = reference[first], selected[first]
    assert (a["event_id"], a["payload"]["token_id"], b["payload"]["token_id"]) == ("e21", 18, 10)
    assert raw_values(a) == raw_values(b), "same raw logits, different selection → processors"
    assert run.finish_reason == "length" and len(run.selected) == 8


def test_masks_commute_so_the_wrong_order_selects_the_same_ids():
    assert faulty_run("wrong_processor_order").selected == [14, 15, 16, 17, 18]


def test_broken_detokenizer_first_shows_in_e06_bytes_with_the_same_token(golden):
    faulty = faulty_run("broken_detokenizer").events
    event_id, rule, key = diverges_at(golden, faulty)
    assert (event_id, rule) == ("e06", "discrete_state") and key in ("byte_length", "utf8_hex")
    a, b = event(golden, "e06")["payload"], event(faulty, "e06")["payload"]
    assert a["token_id"] == b["token_id"] == 14
    assert a["utf8_hex"] != b["utf8_hex"]
    assert [e["payload"]["token_id"] for e in golden if e["event_type"] == "token.selected"] == [
        e["payload"]["token_id"] for e in faulty if e["event_type"] == "token.selected"
    ]


def test_a_changed_event_type_is_the_first_divergence(golden):
    edited = [dict(e) for e in golden]
    edited[7] = {**edited[7], "event_type": "decode.skipped"}
    assert diverges_at(golden, edited) == ("e07", "event_type_and_parent", "event_type")
