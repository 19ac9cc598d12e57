"""The key of trace three's graded exercises (pages 07–11): hidden cases beyond the public properties —
other schemas, other canonical forms, other schedules and clients, other herds, mysteries from faults
the catalogue does not hold. The reference ``reveal`` shows is the worked solution
(``answer_key/solutions/trace_three.py``). Attached on ``import answer_key``.
"""

from __future__ import annotations

import copy
import json
import unicodedata
from functools import lru_cache

from answer_key.solutions import trace_three as worked
from labkit.check import trace_three_runs as runs
from labkit.check import trace_three_service as service
from labkit.check.core import function, trace
from labkit.check.grading import Diverged
from labkit.tools.confirm import canonical_json, request_digest
from labkit.tools.fixture import fixture_invocation
from labkit.tools.tokenizer import ToolTokenizer
from labkit.trace import kinds

# -- page 07: integer_field_mask -----------------------------------------------------------------

#: schemas the public check does not probe: other bounds and steps, a one-number range, the chapter's
HIDDEN_SCHEMAS = (
    {"type": "integer", "minimum": 7, "maximum": 700, "multipleOf": 7},
    {"type": "integer", "minimum": 100, "maximum": 1000, "multipleOf": 50},
    {"type": "integer", "minimum": 0, "maximum": 95, "multipleOf": 5},
    {"type": "integer", "minimum": 30, "maximum": 30},
    {"type": "integer", "minimum": 1, "maximum": 1440},
)


def _field_cases():
    pieces = tuple(ToolTokenizer().pieces)
    cases = []
    for schema in HIDDEN_SCHEMAS:
        for value in ("", "0", "1", "3", "7", "10", "14", "30", "35", "69", "70", "100", "105", "144", "1000"):
            label = f"{schema['minimum']}…{schema['maximum']} step {schema.get('multipleOf', 1)}, value {value!r}"
            cases.append((label, (value, pieces, schema)))
    return cases


function(_field_cases)(worked.integer_field_mask)  # the hidden reference is the worked solution


# -- page 08: canonical_witness ------------------------------------------------------------------


def _spelled(value, sorts, depth: int = 0, in_list: bool = False) -> str:
    """RFC 8785's spelling of numbers and strings, with objects' keys sorted only where ``sorts(depth, in_list)``."""
    if isinstance(value, dict):
        keys = sorted(value) if sorts(depth, in_list) else list(value)
        members = (json.dumps(k, ensure_ascii=False) + ":" + _spelled(value[k], sorts, depth + 1) for k in keys)
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_spelled(v, sorts, depth + 1, in_list=True) for v in value) + "]"
    return canonical_json(value).decode()


def top_level_sorted_json(value) -> bytes:
    """RFC 8785, but only the outer object's keys sorted."""
    return _spelled(value, lambda depth, in_list: depth == 0).encode()


def list_items_unsorted_json(value) -> bytes:
    """RFC 8785, but an object inside a list keeps its keys as built."""
    return _spelled(value, lambda depth, in_list: not in_list).encode()


def nfc_json(value) -> bytes:
    """RFC 8785 after every string is brought to Unicode NFC (two strings, one spelling)."""

    def nfc(v):
        if isinstance(v, str):
            return unicodedata.normalize("NFC", v)
        if isinstance(v, dict):
            return {nfc(k): nfc(x) for k, x in v.items()}
        return [nfc(x) for x in v] if isinstance(v, list) else v

    return canonical_json(nfc(value))


@trace(reference=worked.canonical_witness)
def canonical_witness():
    def run_with(form):
        def check(candidate):
            found = runs.witness_holds(candidate, form, f"canonical form {form.__name__}", flawed=True)
            if found is not None:
                raise Diverged(found)

        return check

    return [
        (f"canonical form {f.__name__}", None, run_with(f))
        for f in (top_level_sorted_json, list_items_unsorted_json, nfc_json)
    ]


# -- page 10: fingerprinted_execute, jittered_backoff --------------------------------------------


def _more_clients():
    honest = fixture_invocation().normalized_arguments
    moved = {**honest, "start": "2026-07-20T10:00:00+08:00"}
    return [
        (
            "a refused change leaves the key's record as it was",
            [
                ("req-3:1", request_digest(honest), honest, "perform"),
                ("req-3:1", request_digest(moved), moved, "refuse"),
                ("req-3:1", request_digest(honest), honest, "replay"),
            ],
        ),
        (
            "two keys, one lying about the other's parameters",
            [
                ("req-4:1", request_digest(honest), honest, "perform"),
                ("req-5:1", request_digest(honest), moved, "perform"),
                ("req-4:1", request_digest(moved), honest, "replay"),
            ],
        ),
    ]


@trace(reference=worked.fingerprinted_execute)
def fingerprinted_execute():
    def schedules(candidate):
        service.service_under_schedules(candidate, (424242, 6))

    def clients(candidate):
        service.service_against_clients(candidate, _more_clients)

    return [("six more schedules, another seed", None, schedules), ("more clients", None, clients)]


HIDDEN_HERDS = (
    runs.Herd(clients=50, base_ms=100.0, cap_ms=5000.0, slot_ms=10.0, attempts=10, seed=11),
    runs.Herd(clients=30, base_ms=20.0, cap_ms=2000.0, slot_ms=5.0, attempts=10, seed=3),
)


@trace(reference=worked.jittered_backoff)
def jittered_backoff():
    def run_with(herd):
        def check(candidate):
            found = runs.backoff_bounds(candidate, herd)
            found = found if found is not None else runs.herd_gets_through(candidate, herd)
            if found is not None:
                raise Diverged(found)

        return check

    return [(f"a herd of {herd}", None, run_with(herd)) for herd in HIDDEN_HERDS]


# -- page 11: reproduce_the_fault ------------------------------------------------------------------

#: mysteries the catalogue does not hold: (kind, the config change that makes them)
HIDDEN_MYSTERIES = (
    ("diffusion", {"num_inference_steps": 3}),
    ("tool", {"request_id": "req-7"}),
    ("text", {"sampling": {"minimum_output_tokens": 3}}),
    ("tool", {"subject": "user-7"}),
)


@lru_cache(maxsize=8)
def _mystery(number: int) -> list[dict]:
    """The hidden mystery ``number``'s events (computed once; the reader gets a copy)."""
    kind, change = HIDDEN_MYSTERIES[number]
    found = kinds.kind(kind)
    resources = {"decoder": runs.decoder()} if kind == "tool" else {}
    return found.run(found.config().replace(**copy.deepcopy(change)), None, **resources).events


@trace(reference=worked.reproduce_the_fault)
def reproduce_the_fault():
    def run_with(number, kind):
        def check(candidate):
            mystery = _mystery(number)
            result = runs.reproduces(candidate, kind, mystery, f"hidden mystery {number} ({kind})")
            if result is not None:
                raise Diverged(result)

        return check

    return [(f"hidden mystery {n} ({k})", None, run_with(n, k)) for n, (k, _) in enumerate(HIDDEN_MYSTERIES)]
