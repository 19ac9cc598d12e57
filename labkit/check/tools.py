"""Trace three's exercises inside its runtime (pages 07–08): the grammar mask of the
``duration_minutes`` field and the confirmation's binding to the Invocation digest; the tool runs
every trace-three exercise plugs its piece into.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from functools import lru_cache

import numpy as np

from labkit.check.core import hooked, trace
from labkit.check.grading import Diverged, as_array, call, failure, golden, yes_or_no
from labkit.tools import confirm
from labkit.tools.calls import first_model_call, grammar_for, proposal_mask
from labkit.tools.confirm import Confirmation, invocation_digest
from labkit.tools.fixture import fixture_invocation, golden_file
from labkit.tools.grammar import SchemaGrammar
from labkit.tools.model import load_decoder
from labkit.tools.runtime import USER_TEXT
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec

FIELD = "duration_minutes"
_MARKER = f'"{FIELD}":'
_NARROW = "duration_minutes limited to 15…90"


@lru_cache(maxsize=1)
def decoder():
    return load_decoder()


def scenario(name: str, hook: str) -> tuple[str, list[dict], object]:
    """(label, golden trace, ``run(piece)``) of the tool scenario ``name`` with the piece as hook ``hook``."""
    run = hooked("tool", hook, None if name == "happy" else name, decoder=decoder())
    return f"scenario {name} vs its golden trace", golden(golden_file(name)), run


class _FieldMask:
    """The reader's field mask inside the real grammar-masked decode: at each step inside the field
    it is compared with the schema grammar's mask, and the first difference stops the run."""

    def __init__(self, candidate, grammar, schema: dict, case: str):
        self.candidate, self.reference, self.schema, self.case = candidate, proposal_mask(grammar), dict(schema), case
        self.tok = ToolTokenizer()
        self.step = 0

    def __call__(self, text: str) -> np.ndarray:
        self.step += 1
        reference = self.reference(text)
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


def _with_bounds(spec, minimum: int, maximum: int):
    schema = copy.deepcopy(spec.input_schema)
    schema["properties"][FIELD].update(minimum=minimum, maximum=maximum)
    return replace(spec, input_schema=schema)


def _unreached_values(schema: dict) -> list[str]:
    """Values the decode does not reach: the empty field, every prefix of the bounds, one past them."""
    low, high = str(schema["minimum"]), str(schema["maximum"])
    values = {"", "9", "99"} | {high[:i] for i in range(1, len(high) + 1)} | {low[:i] for i in range(1, len(low) + 1)}
    completable = {v for v in values if any(str(n).startswith(v) for n in range(int(low), int(high) + 1))}
    return sorted(completable)


@trace
def integer_field_mask():
    """The chapter's request against its golden trace; the request under a schema that forbids 10
    (15…90), whose decode takes another path; then values neither decode reaches, for both schemas."""
    spec = load_toolspec()
    narrow = _with_bounds(spec, 15, 90)
    field_of = {name: dict(s.input_schema["properties"][FIELD]) for name, s in (("chapter", spec), ("narrow", narrow))}

    def chapter(candidate):
        mask = _FieldMask(candidate, grammar_for(spec), field_of["chapter"], "the chapter's request (1…1440)")
        return hooked("tool", "proposal_mask", decoder=decoder())(mask)

    def narrowed(candidate):
        mask = _FieldMask(candidate, SchemaGrammar.from_schema(narrow.input_schema), field_of["narrow"], _NARROW)
        first_model_call(decoder(), narrow, USER_TEXT, mask)

    def unreached(candidate):
        for schema in field_of.values():
            document = {"type": "object", "properties": {FIELD: schema}, "required": [FIELD]}
            probe = SchemaGrammar.from_schema({**document, "additionalProperties": False})
            case = f"duration_minutes in {schema['minimum']}…{schema['maximum']}"
            for value in _unreached_values(schema):
                _FieldMask(candidate, probe, schema, case)("{" + _MARKER + value)

    return [
        ("the chapter's request vs the golden trace", golden(golden_file("happy")), chapter),
        (_NARROW, None, narrowed),
        ("values the decodes never reach", None, unreached),
    ]


def _confirmations():
    """Confirmations the scenarios do not reach: a rejection, a reordered Invocation."""
    invocation = fixture_invocation()
    digest = invocation_digest(invocation)
    reordered = replace(invocation, normalized_arguments=dict(reversed(list(invocation.normalized_arguments.items()))))
    rejected = Confirmation("confirm_02", "inv_01", digest, "reject")
    approved = Confirmation("confirm_03", "inv_01", digest, "approve")
    return [
        ("the user pressed 'reject' on the right card", (rejected, invocation)),
        ("the same Invocation with its arguments in another key order", (approved, reordered)),
    ]


@trace(hook=yes_or_no, cases=_confirmations, reference=confirm.digest_matches)
def digest_matches():
    return [scenario(name, "digest_matches") for name in ("happy", "confirmation_mismatch", "tampered_digest")]
