"""Trace three's tokenizer and template: the 86- and 132-token inputs of §7.11 and §7.14."""

import json

import pytest

from booktools.recipes.tools import TARGET_SUMMARY, TARGET_TOOL_MESSAGE, build_calendar_toolspec
from labkit.tools.config import USER_TEXT
from labkit.tools.fixture import TARGET_ARGUMENTS
from labkit.tools.tokenizer import ToolTemplate, ToolTokenizer, compact_json, render_signature, vocabulary
from labkit.tools.toolspec import check_toolspec, load_toolspec

TOK, TEMPLATE = ToolTokenizer(), ToolTemplate()
SPEC = check_toolspec(build_calendar_toolspec())


def test_vocabulary_has_256_distinct_pieces_with_controls_first():
    pieces = vocabulary()
    assert len(pieces) == 256, f"vocabulary has {len(pieces)} pieces, expected 256"
    assert len(set(pieces)) == 256
    assert pieces[:3] == ("<|pad|>", "<|bos|>", "<|eos|>")
    assert all(chr(c) in pieces for c in range(0x20, 0x7F)), "every printable ASCII char needs a piece"


def test_first_call_input_is_86_tokens_and_second_132_with_identical_prefix():
    first = TOK.encode(TEMPLATE.tool_call_prompt([SPEC], USER_TEXT))
    second = TOK.encode(
        TEMPLATE.after_tool_result([SPEC], USER_TEXT, compact_json(TARGET_ARGUMENTS), TARGET_TOOL_MESSAGE)
    )
    assert len(first) == 86, f"mc_01 input has {len(first)} tokens, source says 86"
    assert len(second) == 132, f"mc_02 input has {len(second)} tokens, source says 132"
    assert second[:86] == first, "mc_02 must start with mc_01's exact tokens (prefix reuse)"


def test_encode_decode_round_trip_of_every_fixture_text():
    for text in (TEMPLATE.tool_call_prompt([SPEC], USER_TEXT), compact_json(TARGET_ARGUMENTS), TARGET_SUMMARY):
        assert TOK.decode(TOK.encode(text)) == text


def test_arguments_are_26_pieces_plus_call_end_makes_27():
    pieces = [TOK.pieces[i] for i in TOK.encode(compact_json(TARGET_ARGUMENTS))]
    assert len(pieces) + 1 == 27, f"{len(pieces)} argument pieces + <|call_end|> != 27"
    assert pieces[:4] == ['{"', "calendar_id", '":"', "primary"]


def test_unknown_character_error_names_it_and_its_position():
    with pytest.raises(ValueError, match=r"no piece for '€' \(U\+20AC\) at position 2"):
        TOK.encode("ab€")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 255\], got values from 256 to 256"):
        TOK.decode([256])


def test_signature_is_rendered_from_the_schema():
    line = render_signature(SPEC)
    assert line.startswith("calendar.create_event@v1 write: calendar_id:primary; title:string[1..80]")
    assert "duration_minutes:integer[1..1440]" in line and line.endswith("additional:none")


def test_stored_toolspec_is_the_source_spec():
    stored = load_toolspec()
    assert stored.to_json() == build_calendar_toolspec()
    assert list(stored.input_schema["properties"]) == [
        "calendar_id",
        "title",
        "local_date",
        "local_time",
        "duration_minutes",
    ]
    assert stored.input_schema["properties"]["local_time"]["pattern"] == "^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["input_schema"].update(type="objekt"), "not valid Draft 2020-12 at type"),
        (lambda s: s["input_schema"]["properties"]["title"].update(minLength=-1), "not valid Draft 2020-12"),
        (
            lambda s: s["input_schema"].update({"$schema": "http://json-schema.org/draft-07/schema#"}),
            r"\$schema must be",
        ),
        (lambda s: s.pop("version"), "lacks the field 'version'"),
        (lambda s: s.update(side_effect_class="delete"), "side_effect_class"),
    ],
)
def test_bad_toolspec_is_refused_with_the_field_named(change, message):
    spec = json.loads(json.dumps(build_calendar_toolspec()))
    change(spec)
    with pytest.raises(ValueError, match=message):
        check_toolspec(spec)
