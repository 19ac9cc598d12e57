"""The JSON grammar mask: built from the schema, exact on dates and integer bounds, and sound.

The property test decodes under *random* logits with the mask on: whatever the scores,
the document that ends with <|call_end|> parses and validates against the ToolSpec.
"""

import json
from datetime import date

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.tools.calls import grammar_for, greedy_decode
from labkit.tools.fixture import TARGET_ARGUMENTS
from labkit.tools.grammar import FULL_DATE, SchemaGrammar, integer_range_regex, schema_regex
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec, parse_arguments, validate_arguments

SPEC = load_toolspec()
GRAMMAR = grammar_for(SPEC)
TOK = ToolTokenizer()
CONTROL = frozenset(i for i in range(TOK.vocab_size) if TOK.is_control(i))
CALL_END = TOK.id_of("<|call_end|>")
PREFIX = '{"calendar_id":"primary","title":"x","local_date":"'


@pytest.mark.parametrize("low, high", [(1, 1440), (0, 9), (7, 7), (95, 1203), (0, 100)])
def test_integer_range_regex_accepts_exactly_the_range(low, high):
    pattern = regex.compile(integer_range_regex(low, high))
    accepted = {n for n in range(0, 2000) if pattern.fullmatch(str(n))}
    assert accepted == set(range(low, high + 1)), (
        f"range {low}..{high}: wrong members {sorted(accepted ^ set(range(low, high + 1)))[:5]}"
    )
    assert not pattern.fullmatch("01") or low == high == 1


def test_full_date_regex_agrees_with_the_calendar():
    pattern = regex.compile(FULL_DATE)
    for year in (1900, 2000, 2023, 2024, 2026):
        for month in range(0, 14):
            for day in range(0, 33):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    date.fromisoformat(text)
                    real = True
                except ValueError:
                    real = False
                assert bool(pattern.fullmatch(text)) == real, f"{text}: grammar says {not real}, calendar says {real}"


def test_impossible_dates_are_not_viable_prefixes():
    assert not GRAMMAR.viable(PREFIX + "2026-02-3"), "2026-02-30 must be cut off at its last digit"
    assert GRAMMAR.viable(PREFIX + "2024-02-29")
    assert not GRAMMAR.viable(PREFIX + "2023-02-29")


def test_mask_allows_stop_only_on_a_complete_document():
    done = (
        '{"calendar_id":"primary","title":"带护照","local_date":"2026-07-20",'
        '"local_time":"09:00","duration_minutes":10}'
    )
    mask = GRAMMAR.mask(done, TOK.pieces, CALL_END, CONTROL)
    assert mask[CALL_END] and mask.sum() == 1, (
        f"after the closing brace only <|call_end|> is allowed, got {mask.sum()} tokens"
    )
    early = GRAMMAR.mask(done[:-1], TOK.pieces, CALL_END, CONTROL)
    assert not early[CALL_END], "stop must be masked while the document is incomplete"
    assert early[TOK.id_of("}")] and early[TOK.id_of("0")], "10} and 100 are both viable after ':10'"
    assert not early[TOK.id_of('"')], "a quote cannot follow an integer"


def test_extra_keys_and_whitespace_are_never_viable():
    assert not GRAMMAR.viable('{"notify_all"')
    assert not GRAMMAR.viable('{ "calendar_id"')
    assert not GRAMMAR.viable('{"calendar_id":"secondary"')


@pytest.mark.parametrize(
    "schema, message",
    [
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            "additionalProperties must be false",
        ),
        ({"type": "number"}, "type 'number' is not supported"),
        ({"type": "string", "pattern": "[0-9]+"}, "must be anchored"),
        ({"type": "string", "format": "email"}, "knows 'date' only"),
        ({"type": "integer", "minimum": 1}, "need both minimum and maximum"),
    ],
)
def test_unsupported_schema_constructs_are_refused_by_name(schema, message):
    with pytest.raises(ValueError, match=message):
        schema_regex(schema)


def _decode_with_random_logits(seed: int):
    rng = np.random.default_rng(seed)
    return greedy_decode(
        rng.normal(size=TOK.vocab_size) * 3,
        lambda _tok: rng.normal(size=TOK.vocab_size) * 3,
        lambda text: GRAMMAR.mask(text, TOK.pieces, CALL_END, CONTROL),
        TOK.pieces,
        {CALL_END: "tool_proposal_complete"},
        200,
    )


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_masked_greedy_under_random_logits_always_yields_a_valid_document(seed):
    result = _decode_with_random_logits(seed)
    assert result.finish_reason == "tool_proposal_complete", f"seed {seed}: stopped by {result.finish_reason}"
    arguments = parse_arguments(result.text.encode("utf-8"))
    errors = validate_arguments(SPEC, arguments)
    assert errors == (), f"seed {seed}: {result.text} fails validation: {errors}"


def test_grammar_compiled_from_the_schema_matches_the_fixture_arguments():
    grammar = SchemaGrammar.from_schema(SPEC.input_schema)
    text = json.dumps(TARGET_ARGUMENTS, ensure_ascii=False, separators=(",", ":"))
    assert grammar.complete(text)
    assert not grammar.complete(text.replace("09:00", "24:00"))
    assert not grammar.complete(text.replace(":10}", ":1441}"))
