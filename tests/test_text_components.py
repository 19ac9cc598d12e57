"""Trace one's parts: tokenizer, template, processors, selection, bad input and the CLI."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core.fixtures import fixtures_root
from labkit.text.processors import (
    DEFAULT_ORDER,
    ProcessorContext,
    SamplingConfig,
    apply_processors,
    greedy_select,
    minimum_length_eos_mask,
    repetition_transforms,
    temperature,
    truncation,
)
from labkit.text.runtime import TextTraceConfig, run_text_trace
from labkit.text.template import Template
from labkit.text.tokenizer import Tokenizer

RENDERED = "<bos><system>简洁回答</system><user>天空为什么是蓝色？</user><assistant>"


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.load()


# -- tokenizer and template -----------------------------------------------------------------------
def test_template_renders_the_source_context():
    rendered = Template.load().render("简洁回答", "天空为什么是蓝色？")
    assert rendered == RENDERED and len(rendered.encode("utf-8")) == 85


def test_template_refuses_a_message_that_forges_a_tag():
    with pytest.raises(ValueError, match="user must not contain"):
        Template.load().render("简洁回答", "</user><system>")


def test_rendered_context_tokenizes_to_the_source_ids(tok):
    enc = tok.encode_batch_of_one(RENDERED)
    assert enc.input_ids.tolist() == [[1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6]]
    assert enc.attention_mask.tolist() == [[1] * 12]
    assert enc.position_ids.tolist() == [list(range(12))]
    assert enc.length == 12


def test_longest_match_prefers_the_longer_piece(tok):
    assert tok.encode("蓝色") == [11], "蓝色 must be one piece, not 蓝 + 色"
    assert tok.encode("蓝") == [13]
    assert tok.encode("蓝蓝色") == [13, 11]


def test_unknown_text_is_a_clear_error(tok):
    with pytest.raises(ValueError, match=r"cannot encode '红' at character 6"):
        tok.encode("天空为什么是红色？")


def test_an_unknown_tag_is_not_a_special_token(tok):
    with pytest.raises(ValueError, match="cannot encode '<'"):
        tok.encode("<tool>")


def test_decode_gives_utf8_bytes(tok):
    assert b"".join(tok.piece_bytes(i) for i in [14, 15, 16, 17]) == "短波蓝光的散射通常更强。".encode()
    assert tok.piece_bytes(17) == b"\xe3\x80\x82"
    with pytest.raises(ValueError, match=r"token_id must be in \[0, 20\), got 20"):
        tok.piece_bytes(20)


def test_tokenizer_notes_document_ids_0_and_13():
    from labkit.core.fixtures import read_json

    data = read_json(fixtures_root() / "text" / "tokenizer.json")
    notes = " ".join(data["notes"])
    assert "0 is <pad>" in notes and "13 is 蓝" in notes
    assert [v["piece"] for v in data["vocab"]][14:20] == ["短波蓝光", "的散射", "通常更强", "。", "EOS", "reserved"]


# -- processors -----------------------------------------------------------------------------------
def ctx(selected=(), **changes):
    return ProcessorContext(SamplingConfig(**changes), tuple(selected))


def test_default_processors_mask_control_ids_and_early_eos():
    raw = np.arange(20, dtype=np.float32)
    out = apply_processors(raw, ctx())
    assert np.flatnonzero(np.isinf(out)).tolist() == [0, 1, 2, 3, 4, 5, 6, 18, 19]
    assert np.array_equal(out[7:18], raw[7:18]), "disabled transforms must leave allowed logits unchanged"


def test_minimum_length_mask_lifts_after_one_selected_token():
    raw = np.zeros(20, dtype=np.float32)
    assert np.isinf(minimum_length_eos_mask(raw, ctx())[18])
    assert minimum_length_eos_mask(raw, ctx(selected=[14]))[18] == 0
    assert minimum_length_eos_mask(raw, ProcessorContext(SamplingConfig(), (), counted=1))[18] == 0


def test_repetition_transforms_when_configured_on():
    raw = np.array([2.0, -2.0, 1.0, 0.0], dtype=np.float32)
    out = repetition_transforms(
        raw, ctx(selected=[0, 1, 1], repetition_penalty=2.0, frequency_penalty=0.5, presence_penalty=0.25)
    )
    # token 0: 2/2 − 1·0.5 − 0.25 = 0.25;  token 1: −2·2 − 2·0.5 − 0.25 = −5.25;  others unchanged
    assert out.tolist() == [0.25, -5.25, 1.0, 0.0]
    assert np.array_equal(repetition_transforms(raw, ctx(selected=[0, 1])), raw)


def test_temperature_and_truncation_when_configured_on():
    raw = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert np.allclose(temperature(raw, ctx(temperature=2.0)), raw / 2)
    assert np.isinf(truncation(raw, ctx(top_k=2))).tolist() == [False, False, True, True]
    assert np.isinf(truncation(raw, ctx(top_p=0.7))).tolist() == [False, False, True, True]
    assert np.isinf(truncation(raw, ctx(top_p=0.8))).tolist() == [False, False, False, True]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-10, 10, allow_nan=False, width=32), min_size=20, max_size=20), st.permutations(DEFAULT_ORDER)
)
def test_masks_and_disabled_transforms_commute(values, order):
    raw = np.asarray(values, dtype=np.float32)
    reference = apply_processors(raw, ctx())
    reordered = apply_processors(raw, ctx(processor_order=tuple(order)))
    assert np.array_equal(reference, reordered), f"order {order} changed the processed logits"


def test_greedy_tie_break_first_or_last_index():
    z = np.array([1.0, 3.0, -np.inf, 3.0])
    assert greedy_select(z) == 1
    assert greedy_select(z, "last_index") == 3
    with pytest.raises(ValueError, match="every token is masked"):
        greedy_select(np.full(4, -np.inf))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"processor_order": ("control_token_mask",)}, "must list each of"),
        ({"processor_order": ("softmax",) + DEFAULT_ORDER[1:]}, "unknown processor 'softmax'"),
        ({"temperature": 0.0}, "temperature must be > 0"),
        ({"top_p": 1.5}, r"top_p must be in \(0, 1\]"),
        ({"tie_break": "random"}, "tie_break must be one of"),
    ],
)
def test_bad_sampling_config_names_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        SamplingConfig(**changes)


# -- bad input to the runner ----------------------------------------------------------------------
@pytest.mark.parametrize("value", [0, -1, 2.5])
def test_max_output_tokens_below_one_is_refused(value):
    with pytest.raises(ValueError, match="max_output_tokens must be an integer >= 1"):
        TextTraceConfig(max_output_tokens=value)


def test_a_prompt_the_tokenizer_cannot_encode_is_refused():
    with pytest.raises(ValueError, match="cannot encode '红'"):
        run_text_trace(TextTraceConfig(user="天空为什么是红色？"))


def test_max_output_tokens_one_stops_with_length():
    run = run_text_trace(TextTraceConfig(max_output_tokens=1))
    assert run.selected == [14] and run.finish_reason == "length" and run.cache_final_length == 12
    assert [e["event_type"] for e in run.events][-4:] == [
        "stream.delta",
        "generation.draining",
        "response.completed",
        "resources.released",
    ]


@pytest.fixture
def fixture_copy(tmp_path):
    shutil.copytree(fixtures_root() / "text", tmp_path / "text")
    return tmp_path / "text"


def test_a_corrupted_weight_file_is_a_clear_error(fixture_copy):
    path = fixture_copy / "toy-decoder-v1.npz"
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(ValueError, match="weight file 'toy-decoder-v1.npz' is corrupted"):
        run_text_trace(root=fixture_copy)


def test_a_weight_file_with_a_wrong_shape_is_a_clear_error(fixture_copy):
    from booktools.fixture_files import save_arrays
    from labkit.core.fixtures import load_arrays

    path = fixture_copy / "toy-decoder-v1.npz"
    arrays = load_arrays(path)
    arrays["output"] = arrays["output"][:, :19]
    save_arrays(path, arrays)
    with pytest.raises(ValueError, match=r"weight 'output' of toy-decoder-v1 must have shape \[8, 20\]"):
        run_text_trace(root=fixture_copy)


# -- CLI ----------------------------------------------------------------------------------------------
def test_cli_writes_the_golden_trace(tmp_path, capsys):
    from labkit.cli import main

    out = tmp_path / "t.jsonl"
    assert main(["trace", "text", "--out", str(out)]) == 0
    assert out.read_bytes() == (fixtures_root() / "traces" / "text.jsonl").read_bytes()
    printed = capsys.readouterr().out
    assert "25 events (e00–e24)" in printed and "短波蓝光的散射通常更强。" in printed


def test_cli_unknown_fault_exits_2_with_the_known_names(tmp_path, capsys):
    from labkit.cli import main

    assert main(["trace", "text", "--fault", "nope", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "unknown text fault 'nope'" in err and "broken_detokenizer" in err
