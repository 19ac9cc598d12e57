"""Trace three's exercises catch typical wrong answers, each at the first divergent decision or
event and with the hint a reader needs.  (Every solution passing, and stubs/crashes/wrong
signatures, are covered for all exercises by tests/test_check.py.)"""

import json

import numpy as np
import pytest

import labkit.check as check
from labkit.tools.calendar_service import IdempotencyConflict
from labkit.tools.confirm import invocation_digest, sha256_digest

# -- integer_field_mask ----------------------------------------------------------------------------


def _field_mask(closes=True, leading_zero=False, prefix_in_range=False, bounds=None):
    """A field mask with one usual mistake switched on (all off: a right answer)."""

    def mask(value_so_far, pieces, schema):
        low, high = bounds or (schema["minimum"], schema["maximum"])

        def allows(piece):
            digits = piece.removesuffix("}")
            number = value_so_far + digits
            if digits and not digits.isdigit():
                return False
            if piece.endswith("}"):
                return closes and number.isdigit() and str(int(number)) == number and low <= int(number) <= high
            if not digits:
                return False
            if prefix_in_range:
                return low <= int(number) <= high
            return any(str(n).startswith(number) for n in range(low, high + 1)) or (
                leading_zero and number.startswith("0")
            )

        return np.array([allows(piece) for piece in pieces], dtype=bool)

    return mask


def test_the_mistake_free_field_mask_helper_passes():
    assert check.integer_field_mask(_field_mask()).passed


def test_field_mask_that_never_closes_is_caught_at_the_closing_brace():
    result = check.integer_field_mask(_field_mask(closes=False))
    assert not result.passed
    assert result.where == "the chapter's request (1…1440): decode step 26, value so far '10', token 104 '}'", (
        result.where
    )
    assert (result.got, result.expected) == (False, True)
    assert result.hint


def test_field_mask_that_allows_a_leading_zero_is_caught_at_the_first_digit():
    result = check.integer_field_mask(_field_mask(leading_zero=True))
    assert not result.passed and "decode step 25, value so far '', token 27 '0'" in result.where, result.where
    assert result.hint


def test_field_mask_that_wants_every_prefix_in_range_is_caught_under_the_narrow_schema():
    result = check.integer_field_mask(_field_mask(prefix_in_range=True))
    assert not result.passed and result.where.startswith("duration_minutes limited to 15…90"), result.where
    assert result.hint


def test_field_mask_with_hard_coded_bounds_is_caught_under_the_narrow_schema():
    result = check.integer_field_mask(_field_mask(bounds=(1, 1440)))
    assert not result.passed and "token 120 '10'" in result.where, result.where
    assert result.hint


def test_field_mask_with_the_wrong_shape_is_refused():
    result = check.integer_field_mask(lambda value_so_far, pieces, schema: np.ones(10, dtype=bool))
    assert not result.passed and "must have shape [256], got [10]" in result.message


# -- digest_matches --------------------------------------------------------------------------------


def test_binding_by_invocation_id_only_is_caught_by_the_tampered_digest():
    result = check.digest_matches(
        lambda confirmation, invocation: confirmation.invocation_id == invocation.invocation_id
    )
    assert not result.passed
    assert result.where.startswith("t07 confirmation.approved, field event_type — scenario tampered_digest"), (
        result.where
    )
    assert (result.got, result.expected) == ("confirmation.approved", "confirmation.rejected")
    assert result.hint


def test_binding_that_approves_everything_is_caught_by_the_10_oclock_edit():
    result = check.digest_matches(lambda confirmation, invocation: True)
    assert not result.passed and "scenario confirmation_mismatch" in result.where, result.where
    assert result.hint


def test_binding_that_hashes_plain_json_dumps_is_caught_on_the_happy_path():
    def plain_json(confirmation, invocation):
        digest = sha256_digest(json.dumps(invocation.to_json()).encode())
        return confirmation.decision == "approve" and confirmation.invocation_digest == digest

    result = check.digest_matches(plain_json)
    assert not result.passed and "scenario happy" in result.where, result.where
    assert (result.got, result.expected) == ("confirmation.rejected", "confirmation.approved")
    assert result.hint


def test_binding_that_ignores_the_decision_is_caught():
    result = check.digest_matches(
        lambda confirmation, invocation: confirmation.invocation_digest == invocation_digest(invocation)
    )
    assert not result.passed and "the user pressed 'reject' on the right card" in result.where
    assert result.hint


def test_binding_that_returns_a_string_is_refused():
    result = check.digest_matches(lambda confirmation, invocation: "yes")
    assert not result.passed and "must return True or False, got str" in result.message


# -- idempotent_execute ----------------------------------------------------------------------------


def test_execute_without_a_lookup_doubles_the_event_of_a_duplicate_delivery():
    result = check.idempotent_execute(lambda service, key, request_digest, request: service.perform(request))
    assert not result.passed
    assert "2 events: ['evt_6K2', 'evt_6K3']" in result.message, result.message
    assert result.where.startswith("the request delivered twice: request #2"), result.where
    assert result.expected.startswith("return the stored result") and result.hint


def test_execute_that_replays_whatever_digest_is_caught_as_a_missing_conflict():
    def no_digest_check(service, key, request_digest, request):
        record = service.stored(key)
        return service.perform(request) if record is None else record["response"]

    result = check.idempotent_execute(no_digest_check)
    assert not result.passed and result.where.startswith("request req-42 resent with start 10:00"), result.where
    assert result.expected.startswith("raise IdempotencyConflict") and result.hint


def test_execute_that_refuses_every_known_key_is_told_a_retry_is_not_a_conflict():
    def always_conflict(service, key, request_digest, request):
        if service.stored(key) is None:
            return service.perform(request)
        raise IdempotencyConflict(key)

    result = check.idempotent_execute(always_conflict)
    assert not result.passed and "request #2" in result.where, result.where
    assert result.hint


def test_execute_returning_the_whole_record_is_refused_with_what_to_return():
    def whole_record(service, key, request_digest, request):
        record = service.stored(key)
        return service.perform(request) if record is None else record

    result = check.idempotent_execute(whole_record)
    assert not result.passed and "got a dict with keys ['request_digest', 'response']" in result.message


@pytest.mark.parametrize("name", ["integer_field_mask", "digest_matches", "idempotent_execute"])
def test_exercise_belongs_to_a_trace_three_page(name):
    assert check.exercises()[name].page.startswith("notebooks/07-traces/"), name
