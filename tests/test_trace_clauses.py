"""§7.16–7.17 as a check: every golden trace keeps its kind's contract; every clause is broken by a
trace changed in just the way it forbids, and the breach names that clause and that event."""

import copy

import pytest

from labkit.core.events import read_golden
from labkit.trace import catalogue
from labkit.trace.clauses import check_contract
from labkit.trace.kinds import CONTRACT_ROWS, KINDS


def _golden(kind: str) -> list[dict]:
    return copy.deepcopy(read_golden(f"{kind}.jsonl"))


def _event(events: list[dict], event_id: str) -> dict:
    return next(e for e in events if e["event_id"] == event_id)["payload"]


def test_every_kind_checks_every_row_of_the_table_in_its_order():
    rows = [row for row, _ in CONTRACT_ROWS]
    for name in KINDS:
        assert [c.row for c in KINDS[name].clauses] == rows, name


@pytest.mark.parametrize("kind", ["text", "diffusion", "tool"])
def test_the_golden_trace_keeps_its_contract(kind):
    assert check_contract(kind, _golden(kind)) == []


@pytest.mark.parametrize("fault", sorted(catalogue.faults("tool")))
def test_each_tool_scenario_keeps_its_contract_but_the_double_booking(fault):
    breaches = check_contract("tool", catalogue.run_events("tool", fault))
    if fault == "new_key_second_attempt":  # a second key, a second event: one commit, two for the request
        assert [(b.row, b.event_id) for b in breaches] == [("replay_core", "t17")]
    else:
        assert breaches == [], [str(b) for b in breaches]


def _set(event_id: str, **changes):
    def change(events):
        _event(events, event_id).update(changes)

    return change


def _swap(first: int, second: int):
    def change(events):
        events[first], events[second] = events[second], events[first]

    return change


def _drop(event_type: str):
    def change(events):
        events[:] = [e for e in events if e["event_type"] != event_type]

    return change


BREAKS = [
    ("text", "initial_object", "e02", _set("e02", position_ids=[[0, 1]])),
    ("text", "model_state", "e12", _set("e12", new_cache_length=15)),
    ("text", "runtime_update", "e09", lambda ev: _event(ev, "e09")["masked_ids"].append(_event(ev, "e09")["token_id"])),
    ("text", "irreversible_point", "e23", _set("e23", utf8_hex="e79fad")),
    ("text", "random_entry", "e13", _set("e13", rng={"counter_before": 0, "counter_after": 2})),
    ("text", "termination", "(missing resources.released)", _drop("resources.released")),
    ("text", "replay_core", "e23", _set("e23", output_tokens_returned=5)),
    ("diffusion", "initial_object", "d00", _swap(0, 1)),
    ("diffusion", "model_state", "d03", _set("d03", timestep=999)),
    ("diffusion", "runtime_update", "d05", _set("d05", alpha_bar_prev=0.9)),
    ("diffusion", "irreversible_point", "d06", _swap(6, 7)),
    ("diffusion", "random_entry", "d03", _set("d03", rng={"counter_before": 4096, "counter_after": 8192})),
    ("diffusion", "termination", "(missing vae.decoded)", _drop("vae.decoded")),
    ("diffusion", "replay_core", "d01", _set("d01", seed=None)),
    ("tool", "initial_object", "t01", lambda ev: ev.pop(0)),
    ("tool", "model_state", "t11", _set("t11", model_call_id="mc_01")),
    ("tool", "runtime_update", "t03", _swap(3, 4)),
    ("tool", "irreversible_point", "t09", _set("t07", digest_matches=False)),
    ("tool", "random_entry", "t00", _set("t00", rng={"counter_before": 0, "counter_after": 1})),
    ("tool", "termination", "t13", _set("t13", finish_reason="timeout")),
    ("tool", "replay_core", "t14", lambda ev: _event(ev, "t14")["commit"].update(events_for_key=["evt_6K2", "x"])),
]


@pytest.mark.parametrize(("kind", "row", "where", "change"), BREAKS, ids=[f"{k}-{r}" for k, r, _, _ in BREAKS])
def test_a_trace_changed_as_a_clause_forbids_breaks_that_clause_there(kind, row, where, change):
    events = _golden(kind)
    change(events)
    breaches = [(b.row, b.event_id) for b in check_contract(kind, events)]
    assert breaches[0] == (row, where), breaches
    assert breaches == [(row, where)] or (kind, row) == ("diffusion", "model_state"), breaches  # a late step also
    # leaves the planned schedule unfinished (termination)


def test_a_trace_missing_a_field_is_a_breach_not_a_traceback():
    events = _golden("text")
    del _event(events, "e23")["finish_reason"]
    assert {b.row for b in check_contract("text", events)} >= {"termination"}


@pytest.mark.parametrize(
    ("kind", "events", "message"), [("audio", [], "unknown trace kind 'audio'"), ("text", {}, "events")]
)
def test_bad_arguments_are_named(kind, events, message):
    with pytest.raises(ValueError, match=message):
        check_contract(kind, events)
