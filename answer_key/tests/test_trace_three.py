"""Trace three with the key loaded: every worked solution passes within its time budget, a right answer
passes in every reasonable form, near misses fail, and the hidden cases catch answers that only fit
the public ones."""

import time

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import without_key
from labkit.trace import catalogue

NAMES = (
    "integer_field_mask",
    "extra_field_first_event",
    "canonical_witness",
    "digest_changes_on_reorder",
    "reuse_for_other_request",
    "fingerprinted_execute",
    "lost_response_first_event",
    "jittered_backoff",
    "cfg_swap_divergence",
    "reproduce_the_fault",
    "three_token_event_count",
)


@pytest.fixture
def mine(solution):
    for exercise in check.exercises().values():
        exercise.wrong_runs, exercise.revealed = 0, False
    return solution("trace_three")


def run(name, candidate):
    return check.exercises()[name](candidate)


@pytest.mark.parametrize("name", NAMES)
def test_the_worked_solution_passes_in_under_a_second(mine, name):
    run(name, getattr(mine, name))  # warm: the fixtures, the decoder, the golden traces
    start = time.perf_counter()
    result = run(name, getattr(mine, name))
    assert result.passed, repr(result)
    assert time.perf_counter() - start < 1.0


def test_the_trace_three_exercises_keep_a_third_extend_and_a_prediction_or_diagnosis_per_page():
    specs = [check.exercises()[n] for n in NAMES]
    assert 3 * sum(s.kind in ("extend", "derive") for s in specs) >= len(specs)
    pages = {s.page for s in specs}
    assert pages == {s.page for s in specs if s.kind in ("predict", "diagnose")}
    assert all(s.points == 0 for s in specs if s.kind == "predict")


# -- the defects: a right answer in every reasonable form passes, a near miss fails ----------------


@pytest.mark.parametrize("right", [False, np.bool_(False)])
def test_digest_changes_on_reorder_takes_a_numpy_bool(mine, right):
    assert run("digest_changes_on_reorder", right).passed


@pytest.mark.parametrize(
    "right",
    [
        ("d00", "cfg_batch_order"),
        ["d00", "cfg_batch_order"],
        ("d00", "cfg_batch_order[0]"),
        (" D00", "CFG_batch_order"),
    ],
)
def test_cfg_swap_divergence_takes_the_field_as_the_event_shows_it_or_as_the_divergence_names_it(right):
    assert run("cfg_swap_divergence", right).passed


@pytest.mark.parametrize(
    "near", [("d01", "cfg_batch_order"), ("d00", "cfg_batch_order[1]"), ("d00", "cfg_order"), ("d00",)]
)
def test_cfg_swap_divergence_refuses_a_near_miss(near):
    result = run("cfg_swap_divergence", near)
    assert not result.passed


@pytest.mark.parametrize(
    ("name", "forms", "near"),
    [
        ("reuse_for_other_request", [76, np.int64(76), 76.0, np.array(76)], [75, 77, 76.5, "76"]),
        ("three_token_event_count", [18, np.int32(18)], [17, 19, 18.25]),
        ("extra_field_first_event", ["t02", " T02 "], ["t01", "t03", 2]),
        ("lost_response_first_event", ["t09"], ["t08", "t10"]),
    ],
)
def test_a_prediction_passes_in_every_form_and_fails_next_to_it(name, forms, near):
    assert all(run(name, right).passed for right in forms)
    assert not any(run(name, wrong).passed for wrong in near)


# -- the hidden cases catch what fits only the public ones -------------------------------------------


def test_a_field_mask_that_knows_only_the_public_step_fails_a_hidden_schema():
    def step_15_only(value_so_far, pieces, schema):
        step = 15 if schema.get("multipleOf") else 1
        numbers = [str(n) for n in range(schema["minimum"], schema["maximum"] + 1) if n % step == 0]
        return np.array(
            [
                (p == "}" and value_so_far in numbers)
                or (p.isdigit() and any(n.startswith(value_so_far + p) for n in numbers))
                for p in pieces
            ]
        )

    with without_key():
        assert run("integer_field_mask", step_15_only).passed  # the public properties hold
    result = run("integer_field_mask", step_15_only)
    assert not result.passed and result.where.startswith("case “7…700 step 7"), repr(result)


def test_a_witness_that_knows_only_the_pages_flaws_fails_a_hidden_form():
    def pages_flaws(canonicalise):
        for a, b in [({"a": 1, "b": 2}, {"b": 2, "a": 1}), (1, 1.0), ({"a": None}, {})]:
            if (canonicalise(a) == canonicalise(b)) != (a == b):  # only the None pair is two documents
                return a, b
        return None

    with without_key():
        assert run("canonical_witness", pages_flaws).passed
    result = run("canonical_witness", pages_flaws)
    assert not result.passed and result.where == "canonical form top_level_sorted_json", repr(result)


def test_an_execute_that_forgets_a_refused_change_fails_a_hidden_client(mine):
    def forgets(service, key, declared, request):
        try:
            return mine.fingerprinted_execute(service, key, declared, request)
        except mine.IdempotencyConflict:
            return service.perform(request)  # the refused change performed after all

    result = run("fingerprinted_execute", forgets)
    assert not result.passed and result.got != "refuse"


def test_a_spread_that_stops_growing_early_passes_the_public_herd_and_fails_a_hidden_one():
    def stops_at_four_base(attempt, base_ms, cap_ms, u):
        return u * min(cap_ms, base_ms * 2 ** min(attempt, 2))

    with without_key():
        assert run("jittered_backoff", stops_at_four_base).passed
    result = run("jittered_backoff", stops_at_four_base)
    assert not result.passed and result.where.startswith("a herd of 50 clients"), repr(result)


def test_replaying_the_catalogue_passes_the_public_mysteries_and_fails_the_hidden_ones():
    from labkit.trace.divergence import first_divergence

    def replay_the_catalogue(kind, golden, mystery):
        for fault in catalogue.faults(kind).values():
            if first_divergence(mystery, catalogue.run_events(kind, fault.name)) is None:
                return dict(fault.changes)
        return {"trace_id": "unknown"}

    with without_key():
        assert run("reproduce_the_fault", replay_the_catalogue).passed
    result = run("reproduce_the_fault", replay_the_catalogue)
    assert not result.passed and result.where.startswith("hidden mystery 0 (diffusion)"), repr(result)


@pytest.mark.parametrize("name", ["integer_field_mask", "canonical_witness", "fingerprinted_execute"])
def test_reveal_shows_the_keys_reference_and_records_it(name):
    shown = check.reveal(name)
    assert "def " in shown.text and check.exercises()[name].revealed
    check.exercises()[name].revealed = False


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["integer_field_mask", "canonical_witness", "fingerprinted_execute", "jittered_backoff", "reproduce_the_fault"],
)
def test_the_worked_solution_passes_from_a_file_in_the_sandbox(name, capsys):
    """What `labkit check --file` and `labkit grade` do: the answer runs in a child process and the
    checker's objects (a service, a request, a canonical form) cross as handles."""
    from pathlib import Path

    from labkit.cli import main

    worked = Path(__file__).resolve().parents[1] / "solutions" / "trace_three.py"
    assert main(["check", name, "--file", str(worked)]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.startswith(f"✔ {name}")
