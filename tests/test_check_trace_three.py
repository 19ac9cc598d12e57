"""Trace three's public checks (pages 07–12), as a class copy runs them (the key set aside): typical
wrong answers are caught at their place with the reader's own value; no right answer lives here (the
solutions and their tests are the key's, answer_key/)."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import without_key
from labkit.check.trace_three import CANONICAL_FORMS
from labkit.tools.calendar_service import IdempotencyConflict
from labkit.tools.grammar import SchemaGrammar
from labkit.trace import catalogue


@pytest.fixture(autouse=True)
def class_copy(request):
    """Every test sees what a class copy sees, with fresh hint levels (a fault prediction's answer is
    the kit's own run of the fault: its test needs no key set aside)."""
    for exercise in check.exercises().values():
        exercise.wrong_runs = 0
    if "fault_prediction" in request.node.name:
        yield
        return
    with without_key():
        yield


def verdict(name, candidate):
    result = check.exercises()[name](candidate)
    assert not result.passed and result.status == "failed", repr(result)
    return result


# -- integer_field_mask ----------------------------------------------------------------------------


def _digits_mask(numbers_of):
    """A field mask from the numbers it believes in: ``numbers_of(schema)`` → the spellings it accepts."""

    def mask(value_so_far, pieces, schema):
        numbers = numbers_of(schema)
        return np.array(
            [
                (piece == "}" and value_so_far in numbers)
                or (piece.isdigit() and any(n.startswith(value_so_far + piece) for n in numbers))
                for piece in pieces
            ]
        )

    return mask


def test_a_mask_that_ignores_the_step_is_caught_closing_the_first_number_off_the_step():
    in_range = _digits_mask(lambda s: {str(n) for n in range(s["minimum"], s["maximum"] + 1)})
    result = verdict("integer_field_mask", in_range)
    assert result.where == "duration_minutes in 15…240 in steps of 15: value so far '20', token 104 '}'"
    assert result.got is True


def test_a_mask_that_forgets_the_multi_digit_pieces_is_caught_where_one_is_on_the_way():
    digits_only = _digits_mask(lambda s: {str(n) for n in range(s["minimum"], s["maximum"] + 1) if n % 15 == 0})
    result = verdict("integer_field_mask", lambda v, p, s: digits_only(v, p, s) & (np.char.str_len(p) == 1))
    assert result.where.startswith("the chapter's request (1…1440): decode step 25, value so far ''"), result.where
    assert result.got is False


def test_a_mask_that_allows_a_dead_end_is_caught_at_the_piece_that_starts_it():
    in_steps = _digits_mask(lambda s: {str(n) for n in range(s["minimum"], s["maximum"] + 1, s.get("multipleOf", 1))})

    def with_a_dead_end(value_so_far, pieces, schema):
        allowed = in_steps(value_so_far, pieces, schema)
        allowed[pieces.index("8")] |= value_so_far == "" and "multipleOf" in schema  # no multiple of 15 starts 8…
        return allowed

    result = verdict("integer_field_mask", with_a_dead_end)
    assert result.where == "duration_minutes in 15…240 in steps of 15: value so far '', token 35 '8'"
    assert result.got is True


def test_the_kits_grammar_composed_for_the_field_is_caught_where_it_ignores_multiple_of():
    def via_grammar(value_so_far, pieces, schema):
        document = {"type": "object", "properties": {"f": schema}, "required": ["f"], "additionalProperties": False}
        allowed = SchemaGrammar.from_schema(document).mask('{"f":' + value_so_far, pieces, 10)
        allowed[10] = False
        return allowed

    result = verdict("integer_field_mask", via_grammar)
    assert result.where.startswith("duration_minutes in 15…240 in steps of 15") and result.got is True


def test_a_mask_that_wants_every_prefix_in_range_is_caught_inside_the_chapters_decode():
    def prefix_in_range(value_so_far, pieces, schema):
        low, high = schema["minimum"], schema["maximum"]
        whole = value_so_far.isdigit() and low <= int(value_so_far) <= high
        return np.array(
            [
                (p == "}" and whole) or (p.isdigit() and low <= int(value_so_far + p) <= high and p[0] != "0")
                for p in pieces
            ]
        )

    result = verdict("integer_field_mask", prefix_in_range)
    assert result.where.startswith("the chapter's request (1…1440): decode step"), result.where


def test_a_mask_that_takes_the_maximum_as_exclusive_is_caught_where_it_cannot_close_the_maximum():
    below_the_top = _digits_mask(
        lambda s: {str(n) for n in range(s["minimum"], s["maximum"] + ("multipleOf" not in s), s.get("multipleOf", 1))}
    )
    result = verdict("integer_field_mask", below_the_top)
    assert result.where == "duration_minutes in 15…240 in steps of 15: value so far '2', token 31 '4'"
    assert result.got is False


def test_a_mask_that_never_closes_is_caught_at_the_closing_brace_of_the_chapters_10():
    closes_never = _digits_mask(lambda s: {str(n) for n in range(s["minimum"], s["maximum"] + 1)})
    result = verdict("integer_field_mask", lambda v, p, s: closes_never(v, p, s) & (np.array(p) != "}"))
    assert result.where == "the chapter's request (1…1440): decode step 26, value so far '10', token 104 '}'"
    assert result.got is False


def test_a_mask_of_the_wrong_shape_is_refused():
    result = verdict("integer_field_mask", lambda value_so_far, pieces, schema: np.ones(10, dtype=bool))
    assert "must have shape [256], got [10]" in result.message


# -- canonical_witness -----------------------------------------------------------------------------


def test_the_canonical_forms_are_the_pages_three_flawed_ones_and_rfc_8785():
    assert list(CANONICAL_FORMS) == ["unsorted_json", "repr_numbers_json", "nulls_dropped_json", "rfc8785"]


def test_a_witness_that_knows_only_key_order_is_caught_at_the_form_that_sorts_keys():
    reorder = ({"a": 1, "b": 2}, {"b": 2, "a": 1})
    result = verdict("canonical_witness", lambda canonicalise: reorder)
    assert result.where == "canonical form repr_numbers_json" and result.got == reorder


def test_no_witness_at_all_is_caught_at_the_first_flawed_form():
    result = verdict("canonical_witness", lambda canonicalise: None)
    assert result.where == "canonical form unsorted_json" and result.got is None


def test_two_different_documents_are_no_witness_for_a_form_that_tells_them_apart():
    result = verdict("canonical_witness", lambda canonicalise: ({"a": 1}, {"a": 2}))
    assert result.where == "canonical form unsorted_json" and result.got == ({"a": 1}, {"a": 2})


def test_values_that_are_not_json_are_refused_by_name():
    result = verdict("canonical_witness", lambda canonicalise: (float("nan"), 1))
    assert "must be JSON values" in result.message


# -- fingerprinted_execute -------------------------------------------------------------------------


def test_trusting_the_declared_digest_is_caught_by_a_changed_request_under_the_same_key():
    def trusts_the_client(service, key, request_digest, request):
        record = service.stored(key)
        if record is None:
            return service.perform(request, request_digest)
        if record["request_digest"] != request_digest:
            raise IdempotencyConflict(key)
        return record["response"]

    result = verdict("fingerprinted_execute", trusts_the_client)
    assert result.where.startswith("a changed request under the same key, declaring the old digest: request #2")
    assert result.got == "replay"


def test_an_execute_without_a_lookup_breaks_a_promise_when_the_request_arrives_twice():
    result = verdict(
        "fingerprinted_execute", lambda service, key, request_digest, request: service.perform(request, request_digest)
    )
    assert result.where.startswith("the request delivered twice"), result.where
    assert "2 events" in result.got


def test_an_execute_that_refuses_every_known_key_fails_the_golden_scenario_of_a_retry():
    def always_conflict(service, key, request_digest, request):
        if service.stored(key) is None:
            return service.perform(request, request_digest)
        raise IdempotencyConflict(key)

    result = verdict("fingerprinted_execute", always_conflict)
    assert result.where and result.got is not None


def test_perform_without_the_digest_its_record_holds_is_the_readers_error_by_name():
    result = verdict("fingerprinted_execute", lambda service, key, request_digest, request: service.perform(request))
    assert "missing 1 required positional argument: 'request_digest'" in result.message


def test_an_execute_returning_the_whole_record_is_refused_with_what_to_return():
    def whole_record(service, key, request_digest, request):
        record = service.stored(key)
        return service.perform(request, request_digest) if record is None else record

    result = verdict("fingerprinted_execute", whole_record)
    assert "got a dict with keys ['request_digest', 'response']" in result.message


# -- jittered_backoff ------------------------------------------------------------------------------


def test_backoff_without_jitter_keeps_the_herd_in_step():
    result = verdict("jittered_backoff", lambda attempt, base_ms, cap_ms, u: min(cap_ms, base_ms * 2**attempt))
    assert result.where.startswith("a herd of 20 clients") and result.got[:3] == [100.0, 200.0, 400.0]


def test_jitter_that_never_grows_is_too_narrow_for_the_herd():
    result = verdict("jittered_backoff", lambda attempt, base_ms, cap_ms, u: u * base_ms)
    assert result.where.startswith("a herd of 20 clients") and all(d < 100 for d in result.got)


def test_a_first_retry_spread_over_the_cap_is_caught_at_retry_0():
    result = verdict("jittered_backoff", lambda attempt, base_ms, cap_ms, u: u * cap_ms)
    assert result.where == "retry 0, u = 0.25, base_ms 100, cap_ms 5000" and result.got == 1250.0


def test_an_uncapped_delay_is_caught_where_it_passes_the_cap():
    result = verdict("jittered_backoff", lambda attempt, base_ms, cap_ms, u: u * base_ms * 2**attempt)
    assert result.where.startswith("retry 6, u = 0.999") and result.got > 5000


def test_a_delay_that_is_not_a_number_is_refused():
    result = verdict("jittered_backoff", lambda attempt, base_ms, cap_ms, u: "100ms")
    assert "must be a number of ms, got str" in result.message


# -- reproduce_the_fault -------------------------------------------------------------------------------


def test_a_change_of_the_wrong_field_is_caught_at_the_first_mystery_with_the_readers_change():
    result = verdict("reproduce_the_fault", lambda kind, golden, mystery: {"max_output_tokens": 8})
    assert result.where.startswith("mystery 0 (text): e05 token.selected"), result.where
    assert result.got == {"max_output_tokens": 8}


def test_the_divergent_field_and_value_copied_as_a_change_is_caught_where_the_field_is_nested():
    from labkit.trace.divergence import first_divergence

    def copy_the_field(kind, golden, mystery):
        div = first_divergence(golden, mystery)
        return {div.field: div.value_b}

    result = verdict("reproduce_the_fault", copy_the_field)
    assert "mystery 0 (text)" in result.message and "has no field 'tie_break'" in result.message


def test_a_fault_name_instead_of_a_change_is_refused():
    result = verdict("reproduce_the_fault", lambda kind, golden, mystery: next(iter(catalogue.faults(kind))))
    assert "return the config change as a dict" in result.message


# -- the predictions: a self-test each, answered by the page's next cell ---------------------------


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("digest_changes_on_reorder", np.bool_(True)),
        ("reuse_for_other_request", 86),
        ("three_token_event_count", 17),
    ],
)
def test_a_wrong_prediction_fails_with_the_readers_value_and_no_answer(name, wrong):
    result = verdict(name, wrong)
    assert result.got == wrong and check.exercises()[name].points == 0
    assert str(check.exercises()[name].answer()) not in repr(result)


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("extra_field_first_event", "t01"),
        ("lost_response_first_event", "t10"),
        ("cfg_swap_divergence", ("d03", "cfg_batch_order")),
        ("cfg_swap_divergence", ("d00", "cfg_order")),
    ],
)
def test_a_wrong_fault_prediction_fails_with_the_readers_value(name, wrong):
    result = verdict(name, wrong)
    assert result.got in (wrong, list(wrong)) and check.exercises()[name].points == 0


def test_a_prediction_of_the_wrong_type_is_named():
    assert "True or False" in verdict("digest_changes_on_reorder", "False").message
    assert "one number" in verdict("reuse_for_other_request", "76").message


@pytest.mark.parametrize(
    "name",
    ["integer_field_mask", "canonical_witness", "fingerprinted_execute", "jittered_backoff", "reproduce_the_fault"],
)
def test_every_graded_exercise_of_trace_three_has_a_public_check(name):
    spec = check.exercises()[name]
    assert spec.graded and spec.properties is not None and not spec.keyed


def test_the_class_copy_sees_no_key_of_trace_three():
    for name in (
        "integer_field_mask",
        "canonical_witness",
        "fingerprinted_execute",
        "jittered_backoff",
        "reproduce_the_fault",
    ):
        with pytest.raises(LookupError):
            check.reveal(name)
