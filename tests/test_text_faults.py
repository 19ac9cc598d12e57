"""Trace one's fault catalogue against the golden run: where each fault first shows (§7.5, §7.17).

The comparison here is written out in the test (the lead's ``labkit.trace.divergence`` will be
checked on the same faults later): per event pair, in §7.17 order — type and parent,
artifacts, discrete state, tensors under the trace's tolerance.
"""

from __future__ import annotations

import pytest

from labkit.text.faults import FAULTS, faulty_config
from labkit.text.runtime import TENSOR_TOLERANCE, TextTraceConfig, run_text_trace


def _tensor_gap(a: dict, b: dict) -> str | None:
    if (a["shape"], a["dtype"]) != (b["shape"], b["dtype"]):
        return f"shape/dtype {a['shape']} {a['dtype']} vs {b['shape']} {b['dtype']}"
    pairs_a, pairs_b = a.get("values", []), b.get("values", [])
    if [i for i, _ in pairs_a] != [i for i, _ in pairs_b]:
        return f"top IDs {pairs_a} vs {pairs_b}"
    for (i, x), (_, y) in zip(pairs_a, pairs_b, strict=True):
        if abs(x - y) > TENSOR_TOLERANCE:
            return f"token {i}: {x} vs {y}"
    for stat, x in a.get("summary", {}).items():
        if abs(x - b["summary"][stat]) > TENSOR_TOLERANCE:
            return f"{stat}: {x} vs {b['summary'][stat]}"
    return None


def first_difference(golden: list[dict], faulty: list[dict]) -> tuple[str, str, str]:
    """(event_id, rule, key) of the first failed comparison; ("", "identical", "") if none."""
    for a, b in zip(golden, faulty, strict=False):
        if (a["event_type"], a["parent_event_id"]) != (b["event_type"], b["parent_event_id"]):
            return a["event_id"], "event", "event_type"
        pa, pb = a["payload"], b["payload"]
        if pa.get("artifacts") != pb.get("artifacts"):
            return a["event_id"], "artifacts", "artifacts"
        discrete = sorted((set(pa) | set(pb)) - {"artifacts", "tensors", "rng"})
        for key in discrete:
            if pa.get(key) != pb.get(key):
                return a["event_id"], "discrete", key
        for name in sorted(pa.get("tensors", {})):
            if _tensor_gap(pa["tensors"][name], pb["tensors"][name]):
                return a["event_id"], "tensors", name
        if pa.get("rng") != pb.get("rng"):
            return a["event_id"], "rng", "rng"
    if len(golden) != len(faulty):
        return f"e{min(len(golden), len(faulty)):02d}", "event", "length"
    return "", "identical", ""


@pytest.fixture(scope="module")
def golden():
    return run_text_trace().events


def faulty_run(name):
    return run_text_trace(faulty_config(name))


def event(events, event_id):
    return next(e for e in events if e["event_id"] == event_id)


def raw_values(e):
    return e["payload"]["tensors"]["raw_logits"]["values"]


def test_the_catalogue_has_at_least_five_faults_and_each_changes_the_config():
    assert len(FAULTS) >= 5
    for name in FAULTS:
        assert faulty_config(name) != TextTraceConfig(), f"fault {name} leaves the configuration unchanged"


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_first_diverges_where_the_catalogue_declares(golden, name):
    declared = FAULTS[name].first_divergence
    assert first_difference(golden, faulty_run(name).events) == declared, f"{name}: declared {declared}"


def test_declared_suspects_follow_the_section_7_5_rules():
    for fault in FAULTS.values():
        event_id, rule, _ = fault.first_divergence
        expected = ("model/numeric path" if rule == "tensors" else
                    "tokenizer decoder or transport" if event_id == "e06" else "processors or tie-break")
        assert fault.suspect == expected, f"{fault.name}: suspect {fault.suspect!r}, §7.5 says {expected!r}"


def test_golden_run_against_itself_is_identical(golden):
    assert first_difference(golden, run_text_trace().events) == ("", "identical", "")


def test_perturbed_weight_first_shows_in_e04_logits_with_identical_inputs(golden):
    faulty = faulty_run("perturbed_weight").events
    assert first_difference(golden, faulty) == ("e04", "tensors", "raw_logits")
    assert golden[:4] == faulty[:4], "e00–e03 (the inputs) must be identical"
    assert event(golden, "e02")["payload"]["input_ids"] == event(faulty, "e02")["payload"]["input_ids"]


@pytest.mark.parametrize("name, where", [("reset_rope_position", "e08"),
                                         ("copy_layer0_cache_to_layer1", "e12")])
def test_decode_path_faults_first_show_in_decode_logits_after_a_correct_prefill(golden, name, where):
    faulty = faulty_run(name).events
    assert first_difference(golden, faulty) == (where, "tensors", "raw_logits")
    assert raw_values(event(golden, "e04")) == raw_values(event(faulty, "e04")), "prefill must be unaffected"


@pytest.mark.parametrize("name, key", [("wrong_processor_order", "processor_order"),
                                       ("eos_before_minimum_length", "masked_ids"),
                                       ("eos_in_control_mask", "masked_ids"),
                                       ("tie_break_last_index", "tie_break")])
def test_processor_faults_first_show_at_token_selected_with_equal_raw_logits(golden, name, key):
    faulty = faulty_run(name).events
    event_id, rule, got_key = first_difference(golden, faulty)
    assert (event_id, rule, got_key) == ("e05", "discrete", key)
    a, b = event(golden, "e05"), event(faulty, "e05")
    assert a["event_type"] == "token.selected"
    assert raw_values(a) == raw_values(b), f"{name}: raw logits at e05 must be equal"
    assert raw_values(event(golden, "e04")) == raw_values(event(faulty, "e04"))


def test_eos_in_control_mask_changes_the_selected_id_at_step_5_with_equal_raw_logits(golden):
    run = faulty_run("eos_in_control_mask")
    selected = [e for e in run.events if e["event_type"] == "token.selected"]
    reference = [e for e in golden if e["event_type"] == "token.selected"]
    first = next(i for i, (a, b) in enumerate(zip(reference, selected, strict=False))
                 if a["payload"]["token_id"] != b["payload"]["token_id"])
    a, b = reference[first], selected[first]
    assert (a["event_id"], a["payload"]["token_id"], b["payload"]["token_id"]) == ("e21", 18, 10)
    assert raw_values(a) == raw_values(b), "same raw logits, different selection → processors"
    assert run.finish_reason == "length" and len(run.selected) == 8


def test_masks_commute_so_the_wrong_order_selects_the_same_ids():
    assert faulty_run("wrong_processor_order").selected == [14, 15, 16, 17, 18]


def test_broken_detokenizer_first_shows_in_e06_bytes_with_the_same_token(golden):
    faulty = faulty_run("broken_detokenizer").events
    event_id, rule, key = first_difference(golden, faulty)
    assert (event_id, rule) == ("e06", "discrete") and key in ("byte_length", "utf8_hex")
    a, b = event(golden, "e06")["payload"], event(faulty, "e06")["payload"]
    assert a["token_id"] == b["token_id"] == 14
    assert a["utf8_hex"] != b["utf8_hex"]
    assert [e["payload"]["token_id"] for e in golden if e["event_type"] == "token.selected"] == \
           [e["payload"]["token_id"] for e in faulty if e["event_type"] == "token.selected"]


def test_first_difference_catches_a_changed_event_type(golden):
    edited = [dict(e) for e in golden]
    edited[7] = {**edited[7], "event_type": "decode.skipped"}
    assert first_difference(golden, edited) == ("e07", "event", "event_type")
