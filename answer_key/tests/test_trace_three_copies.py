"""A lazy student's try at trace three's graded exercises, with the key loaded: every callable the pages
import or show and the public labkit callables near each mechanism, adapted (an item, an attribute, a
composition) — and the numbers the pages print. None may pass."""

import dataclasses
import json

import numpy as np
import pytest
import regex

import labkit.check as check
from labkit.check import trace_three_runs
from labkit.check.core import without_key
from labkit.tools import calendar_service
from labkit.tools.calls import grammar_for, proposal_mask
from labkit.tools.confirm import canonical_json, invocation_digest, request_digest
from labkit.tools.fixture import fixture_invocation
from labkit.tools.grammar import SchemaGrammar, integer_range_regex, schema_regex
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue, kinds
from labkit.trace.divergence import first_divergence

GRADED = ("integer_field_mask", "canonical_witness", "fingerprinted_execute", "jittered_backoff", "reproduce_the_fault")


def fails(name, candidate):
    exercise = check.exercises()[name]
    exercise.wrong_runs = 0
    result = exercise(candidate)
    return not result.passed


def test_the_graded_exercises_of_trace_three_are_these():
    mine = {n for n, s in check.exercises().items() if s.page.startswith("notebooks/07-traces/") and s.graded}
    assert set(GRADED) <= mine
    assert all(check.exercises()[n].points > 0 for n in GRADED)


# -- integer_field_mask: the page's grammar, composed for the field ---------------------------------


def _document(schema):
    return {"type": "object", "properties": {"f": schema}, "required": ["f"], "additionalProperties": False}


def _grammar_field(value_so_far, pieces, schema):
    allowed = SchemaGrammar.from_schema(_document(schema)).mask('{"f":' + value_so_far, pieces, 10)
    allowed[10] = False
    return allowed


def _chapter_grammar(value_so_far, pieces, schema):
    prefix = (
        '{"calendar_id":"primary","title":"带护照","local_date":"2026-07-20","local_time":"09:00","duration_minutes":'
    )
    return proposal_mask(grammar_for(load_toolspec()))(prefix + value_so_far)


def _range_regex(value_so_far, pieces, schema):
    pattern = regex.compile(integer_range_regex(schema["minimum"], schema["maximum"]))
    whole = pattern.fullmatch(value_so_far) is not None
    return np.array(
        [
            (p == "}" and whole) or (p.isdigit() and pattern.fullmatch(value_so_far + p, partial=True) is not None)
            for p in pieces
        ]
    )


def _schema_regex(value_so_far, pieces, schema):
    pattern = regex.compile(schema_regex(_document(schema)))
    return np.array([pattern.fullmatch('{"f":' + value_so_far + p, partial=True) is not None for p in pieces])


@pytest.mark.parametrize(
    "candidate",
    [
        _grammar_field,
        _chapter_grammar,
        _range_regex,
        _schema_regex,
        lambda v, p, s: np.ones(len(p), bool),
        lambda v, p, s: np.zeros(len(p), bool),
    ],
)
def test_integer_field_mask_is_not_the_kits_grammar(candidate):
    assert fails("integer_field_mask", candidate)


# -- canonical_witness: pairs the kit can build --------------------------------------------------


def _kit_documents():
    invocation = fixture_invocation()
    args = invocation.normalized_arguments
    return [
        invocation.to_json(),
        args,
        dict(reversed(list(args.items()))),
        json.loads(canonical_json(invocation.to_json())),
        load_toolspec().to_json(),
        invocation.with_arguments("inv_02", start="2026-07-20T10:00:00+08:00").to_json(),
        invocation_digest(invocation),
        request_digest(args),
    ]


def _search_the_kit(canonicalise):
    documents = _kit_documents()
    for a in documents:
        for b in documents:
            if (canonicalise(a) == canonicalise(b)) != (canonical_json(a) == canonical_json(b)):
                return a, b
    return None


@pytest.mark.parametrize(
    "candidate",
    [
        lambda c: None,
        _search_the_kit,
        lambda c: (fixture_invocation().to_json(), fixture_invocation().to_json()),
        lambda c: (_kit_documents()[1], _kit_documents()[2]),
    ],
)
def test_canonical_witness_is_not_found_among_the_kits_documents(candidate):
    assert fails("canonical_witness", candidate)


# -- fingerprinted_execute: the kit's service, adapted ----------------------------------------------


class _AsTheRuntimesDesk:
    """The exercise's service as the runtime's desk: perform stores the request's own digest."""

    def __init__(self, service, digest):
        self.service, self.digest = service, digest

    def stored(self, key):
        return self.service.stored(key)

    def perform(self, request):
        return self.service.perform(request, self.digest)


def _kit_declared(service, key, declared, request):
    return calendar_service.idempotent_execute(_AsTheRuntimesDesk(service, declared), key, declared, request)


def _kit_with_fingerprint(service, key, declared, request):
    fingerprint = request_digest(request.normalized_arguments)
    return calendar_service.idempotent_execute(_AsTheRuntimesDesk(service, declared), key, fingerprint, request)


def _kit_refusing_a_lie(service, key, declared, request):
    if declared != request_digest(request.normalized_arguments):
        raise calendar_service.IdempotencyConflict(key)
    return _kit_declared(service, key, declared, request)


@pytest.mark.parametrize(
    "candidate",
    [
        calendar_service.idempotent_execute,
        _kit_declared,
        _kit_with_fingerprint,
        _kit_refusing_a_lie,
        lambda service, key, declared, request: service.perform(request, declared),
        lambda service, key, declared, request: (
            (service.stored(key) or {}).get("response") or service.perform(request, declared)
        ),
    ],
)
def test_fingerprinted_execute_is_not_the_kits_execute(candidate):
    assert fails("fingerprinted_execute", candidate)


# -- jittered_backoff: the numbers page 10 prints, and a backoff without a spread -------------------


@pytest.mark.parametrize("number", [0, 1, 2, 3, 4, 5, 20, 28, 100, 300, 500, 2000, 5000, 20260719])
def test_jittered_backoff_is_no_number_the_page_prints(number):
    assert fails("jittered_backoff", lambda attempt, base_ms, cap_ms, u, n=number: n)


@pytest.mark.parametrize(
    "candidate",
    [
        lambda a, b, c, u: min(c, b * 2**a),
        lambda a, b, c, u: u * b,
        lambda a, b, c, u: u * c,
        lambda a, b, c, u: b * 2**a,
        lambda a, b, c, u: min(c, b * 2**a) * u * 2,
    ],
)
def test_jittered_backoff_needs_a_growing_capped_spread(candidate):
    assert fails("jittered_backoff", candidate)


# -- reproduce_the_fault: the catalogue and the divergence, adapted ---------------------------------


def _catalogue_replay(kind, golden, mystery):
    for fault in catalogue.faults(kind).values():
        if first_divergence(mystery, catalogue.run_events(kind, fault.name)) is None:
            return dict(fault.changes)
    return dict(next(iter(catalogue.faults(kind).values())).changes)


def _divergence_copied(kind, golden, mystery):
    div = first_divergence(golden, mystery)
    return {div.field.split("[")[0].split(" ")[0].split(".")[-1]: div.value_b}


def _every_field_with_the_divergent_value(kind, golden, mystery):
    div = first_divergence(golden, mystery)
    config = kinds.kind(kind).config()
    tries = [{f.name: div.value_b} for f in dataclasses.fields(config)]
    sampling = getattr(config, "sampling", None)
    if sampling is not None:
        tries += [{"sampling": {f.name: div.value_b}} for f in dataclasses.fields(sampling)]
    for change in tries:
        try:
            if first_divergence(mystery, trace_three_runs._run_with(kind, change)) is None:
                return change
        except Exception:  # noqa: BLE001, S112 - a refused change is simply not it
            continue
    return tries[0]


@pytest.mark.parametrize(
    "candidate",
    [
        _catalogue_replay,
        _divergence_copied,
        _every_field_with_the_divergent_value,
        lambda kind, golden, mystery: {},
        lambda kind, golden, mystery: dict(kinds.kind(kind).faults[next(iter(kinds.kind(kind).faults))].changes),
    ],
)
def test_reproduce_the_fault_is_neither_the_catalogue_nor_the_divergence_copied(candidate):
    assert fails("reproduce_the_fault", candidate)


# -- a class copy: nothing of trace three's key importable -------------------------------------------


@pytest.mark.parametrize("name", GRADED)
def test_a_class_copy_cannot_reveal_a_graded_exercise_of_trace_three(name):
    with without_key():
        exercise = check.exercises()[name]
        assert not exercise.keyed
        with pytest.raises(LookupError):
            exercise.reveal()
