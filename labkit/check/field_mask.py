"""Exercise of page 07 (§7.10–7.11): the grammar mask for the ``duration_minutes`` field.

The reader's mask decides the field's tokens inside the real grammar-masked decode; a
failure names the decode step, the value so far and the first token judged wrongly.
"""

from __future__ import annotations

import numpy as np

from labkit.check import _tools as tools
from labkit.check.core import as_array, call, failure
from labkit.check.grading import Diverged, trace

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


class _FieldMask:
    """The reader's field mask inside the real grammar-masked decode: at each step inside the field
    it is compared with the schema grammar's mask, and the first difference stops the run."""

    def __init__(self, candidate, grammar, schema: dict, case: str):
        self.candidate, self.grammar, self.schema, self.case = candidate, grammar, dict(schema), case
        self.tok, self.stop, self.control = _field_context()
        self.step = 0

    def __call__(self, text: str) -> np.ndarray:
        self.step += 1
        reference = self.grammar.mask(text, self.tok.pieces, self.stop, self.control)
        at = text.find(_MARKER)
        if at < 0 or "}" in text[at:]:
            return reference  # outside the field: the library's grammar
        value = text[at + len(_MARKER) :]
        got = call(self.candidate, value, tuple(self.tok.pieces), dict(self.schema))
        got = as_array(got, "the returned mask", shape=(self.tok.vocab_size,), dtype_kind="bool")
        differ = np.flatnonzero(got != reference)
        if differ.size:
            token = int(differ[0])
            raise Diverged(
                failure(
                    f"your mask differs from the schema grammar at {differ.size} token(s) of this step",
                    where=f"{self.case}: decode step {self.step}, value so far {value!r}, "
                    f"token {token} {self.tok.pieces[token]!r}",
                    rule="allowed[v] ⇔ some continuation of (value + piece) is a valid document",
                    got=bool(got[token]),
                    expected=bool(reference[token]),
                )
            )
        return got


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


def _runs():
    """The chapter's request against its golden trace; the request under a schema that forbids 10
    (15…90), whose decode takes another path; then values neither decode reaches, for both schemas."""
    from labkit.tools.calls import first_model_call, grammar_for
    from labkit.tools.grammar import SchemaGrammar
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.runtime import USER_TEXT
    from labkit.tools.toolspec import load_toolspec

    spec = load_toolspec()
    narrow = _spec_with_bounds(spec, 15, 90)

    def chapter(candidate):
        mask = _FieldMask(candidate, grammar_for(spec), _field_schema(spec), "the chapter's request (1…1440)")
        return tools.run("happy", ToolHooks(proposal_mask=mask)).events

    def narrowed(candidate):
        grammar = SchemaGrammar.from_schema(narrow.input_schema)
        first_model_call(
            tools.decoder(), narrow, USER_TEXT, _FieldMask(candidate, grammar, _field_schema(narrow), _NARROW)
        )

    def direct(candidate):
        for schema in (_field_schema(spec), _field_schema(narrow)):
            document = {"type": "object", "properties": {FIELD: schema}, "required": [FIELD]}
            probe = SchemaGrammar.from_schema({**document, "additionalProperties": False})
            case = f"duration_minutes in {schema['minimum']}…{schema['maximum']}"
            for value in _direct_values(schema):
                _FieldMask(candidate, probe, schema, case)("{" + _MARKER + value)

    return [
        ("the chapter's request vs the golden trace", tools.golden("happy"), chapter),
        (_NARROW, None, narrowed),
        ("values the decodes never reach", None, direct),
    ]


_NARROW = "duration_minutes limited to 15…90"

trace(
    "integer_field_mask",
    "notebooks/07-traces/07-tool-proposal.md",
    "extend",
    "return allowed [V] (bool): which pieces may follow the digits value_so_far of the integer field described "
    "by schema (minimum, maximum), the object's last key — digits that keep the number completable in range, "
    "or `}` once it is a whole number in range; nothing else",
    ("value_so_far", "pieces", "schema"),
    _runs,
    idea="constrained decoding allows a piece only if the document can still be completed into a valid one",
    rule="a prefix need only be completable in range, not in range yet; a JSON integer has no leading zero; "
    "the closing brace needs a whole number in range; the bounds come from the schema handed over",
)
