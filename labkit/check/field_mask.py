"""Exercise of page 07 (§7.10–7.11): the grammar mask for the ``duration_minutes`` field.

The reader's mask decides the field's tokens inside the real grammar-masked decode; a
failure names the decode step, the value so far and the first token judged wrongly.
"""

from __future__ import annotations

import numpy as np

from labkit.check import _tools as tools
from labkit.check.core import CheckResult, as_array, call, exercise, failure, passed
from labkit.check.grading import compare_traces

PAGE = "notebooks/07-traces/07-tool-proposal.md"


FIELD = "duration_minutes"
_MARKER = f'"{FIELD}":'


def _field_context():
    """(tokenizer, stop ID, control IDs) of mc_01's decode."""
    from labkit.tools.tokenizer import ToolTokenizer

    tok = ToolTokenizer()
    control = frozenset(i for i in range(tok.vocab_size) if tok.is_control(i))
    return tok, tok.id_of("<|call_end|>"), control


def _example_completion(new: str, low: int, high: int) -> int | None:
    return next((n for n in range(low, high + 1) if str(n).startswith(new)), None)


class _Diverged(Exception):
    """Stops a run at the reader's first divergent decision (recorded by the hook)."""


def _until_divergence(run):
    try:
        return run()
    except _Diverged:
        return None


class _FieldMask:
    """The reader's field mask inside the real grammar-masked decode; ``mismatches`` records
    each step where it differs from the schema grammar."""

    def __init__(self, candidate, grammar, schema: dict):
        self.candidate, self.grammar, self.schema = candidate, grammar, dict(schema)
        self.tok, self.stop, self.control = _field_context()
        self.step = 0
        self.mismatches: list[tuple] = []

    def reader_mask(self, value: str) -> np.ndarray:
        size = self.tok.vocab_size
        got = call(self.candidate, value, tuple(self.tok.pieces), dict(self.schema))
        return as_array(got, "the returned mask", shape=(size,), dtype_kind="bool")

    def __call__(self, text: str) -> np.ndarray:
        self.step += 1
        reference = self.grammar.mask(text, self.tok.pieces, self.stop, self.control)
        at = text.find(_MARKER)
        if at < 0 or "}" in text[at:]:
            return reference  # outside the field: the library's grammar
        value = text[at + len(_MARKER) :]
        got = self.reader_mask(value)
        differ = np.flatnonzero(got != reference)
        if differ.size:
            self.mismatches.append(
                (self.step, value, int(differ[0]), bool(got[differ[0]]), bool(reference[differ[0]]), int(differ.size))
            )
            raise _Diverged  # the first divergence is all we report
        return got

    def failure(self, case: str) -> CheckResult | None:
        if not self.mismatches:
            return None
        step, value, token, got, expected, count = self.mismatches[0]
        piece = self.tok.pieces[token]
        return failure(
            f"your mask differs from the schema grammar at {count} token(s) of this step",
            where=f"{case}: decode step {step}, value so far {value!r}, token {token} {piece!r}",
            rule="allowed[v] ⇔ some continuation of (value + piece) is a valid document",
            got=got,
            expected=expected,
        )


def _field_schema(spec) -> dict:
    return dict(spec.input_schema["properties"][FIELD])


def _spec_with_bounds(spec, minimum: int, maximum: int):
    import copy
    from dataclasses import replace

    schema = copy.deepcopy(spec.input_schema)
    schema["properties"][FIELD].update(minimum=minimum, maximum=maximum)
    return replace(spec, input_schema=schema)


def _direct_values(schema: dict) -> list[str]:
    """Values the decode does not reach: the empty field, every prefix of the bounds, one past them."""
    low, high = str(schema["minimum"]), str(schema["maximum"])
    values = {"", "9", "99"} | {high[:i] for i in range(1, len(high) + 1)} | {low[:i] for i in range(1, len(low) + 1)}
    return sorted(v for v in values if v == "" or _example_completion(v, int(low), int(high)) is not None)


@exercise(
    "integer_field_mask",
    page=PAGE,
    signature=("value_so_far", "pieces", "schema"),
    kind="extend",
    idea="constrained decoding allows a piece only if the document can still be completed into a valid one",
    rule="a prefix need only be completable in range, not in range yet; a JSON integer has no leading zero; "
    "the closing brace needs a whole number in range; the bounds come from the schema handed over",
)
def check_integer_field_mask(candidate) -> CheckResult:
    """return allowed [V] (bool): which pieces may follow the digits value_so_far of the integer
    field described by schema (minimum, maximum), the object's last key — digits that keep the
    number completable in range, or `}` once it is a whole number in range; nothing else"""
    from labkit.tools.calls import first_model_call, grammar_for
    from labkit.tools.grammar import SchemaGrammar
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.runtime import USER_TEXT
    from labkit.tools.toolspec import load_toolspec

    spec = load_toolspec()
    # 1. the chapter's request: the whole grammar-masked decode, against the golden trace
    reader = _FieldMask(candidate, grammar_for(spec), _field_schema(spec))
    mine = _until_divergence(lambda: tools.run("happy", ToolHooks(proposal_mask=reader)))
    failed = reader.failure("the chapter's request (1…1440)")
    if failed is None:
        failed = compare_traces(
            "the chapter's request vs the golden trace",
            tools.golden("happy"),
            mine.events,
        )
    if failed is not None:
        return failed
    # 2. the same request under a schema that forbids 10 (15…90): the library's decode takes another path
    narrow = _spec_with_bounds(spec, 15, 90)
    grammar = SchemaGrammar.from_schema(narrow.input_schema)
    reader = _FieldMask(candidate, grammar, _field_schema(narrow))
    case = "duration_minutes limited to 15…90"
    mine = _until_divergence(lambda: first_model_call(tools.decoder(), narrow, USER_TEXT, reader))
    reference = first_model_call(tools.decoder(), narrow, USER_TEXT)
    if (failed := reader.failure(case)) is not None:
        return failed
    if mine.decode.token_ids != reference.decode.token_ids:  # pragma: no cover - masks agreed
        return failure("the decode differs although every mask agreed", where=case)
    # 3. values the decodes never reach, for both schemas
    tok, stop, control = _field_context()
    for schema in (_field_schema(spec), _field_schema(narrow)):
        probe = SchemaGrammar.from_schema(
            {"type": "object", "properties": {FIELD: schema}, "required": [FIELD], "additionalProperties": False}
        )
        checker = _FieldMask(candidate, probe, schema)
        for value in _direct_values(schema):
            _until_divergence(lambda value=value, checker=checker: checker("{" + _MARKER + value))
            failed = checker.failure(f"duration_minutes in {schema['minimum']}…{schema['maximum']}")
            if failed is not None:
                return failed
    value = "".join(tok.pieces[i] for i in mine.decode.token_ids if i not in control)
    return passed(
        "the 27-token proposal matches the golden trace, and under 15…90 your "
        f"mask steers the decode to {value.split(_MARKER)[1].rstrip('}')} minutes like the grammar does"
    )
