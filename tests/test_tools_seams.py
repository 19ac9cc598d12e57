"""Faults at the seams (issue 42, items 2 and 7): the phases and the executor a page shows name no fault;
each switch of ``ToolFaults`` changes one seam, and the sound faults leave every seam as it is."""

import dataclasses
import inspect
import re

import pytest

from labkit.text import processors
from labkit.text.faults import FAULTS as TEXT_FAULTS
from labkit.tools import executor, phases
from labkit.tools.executor import CRASH_POINTS, CrashPlan
from labkit.tools.faults import FAULTS
from labkit.tools.fixture import fixture_invocation
from labkit.tools.schedules import FaultSchedule, invariant_violations, run_schedule
from labkit.tools.seams import ExecutionPolicy, ToolFaults, idempotency_key

SWITCHES = sorted({f.name for cls in (ToolFaults, ExecutionPolicy) for f in dataclasses.fields(cls)})


def fault_words(source: str, words) -> list[str]:
    return [w for w in words if re.search(rf"\b{re.escape(w)}\b", source)]


@pytest.mark.parametrize("module", [phases, executor], ids=lambda m: m.__name__)
def test_the_shown_phases_and_executor_name_no_fault(module):
    found = fault_words(inspect.getsource(module), [*FAULTS, *SWITCHES])
    assert not found, f"{module.__name__} names the faults or fault switches {found}: read them at a seam"


def test_the_processors_name_no_fault_switch():
    switches = [n for f in TEXT_FAULTS.values() for n in f.changes] + ["eos_mask_counts_pending_token"]
    assert not fault_words(inspect.getsource(processors), switches)


def test_the_grep_finds_a_fault_branch():
    assert fault_words('if run.config.cancel_after_commit:\n    return "x"', [*FAULTS]) == ["cancel_after_commit"]
    assert fault_words("config.new_key_per_attempt", SWITCHES) == ["new_key_per_attempt"]


def test_the_sound_faults_leave_every_seam_as_it_is():
    sound, invocation = ToolFaults(), fixture_invocation()
    assert sound.parser_input(b'{"a": 1}') == b'{"a": 1}' and sound.parsed({"a": 1}) == {"a": 1}
    assert sound.stored_approval("sha256:00") == "sha256:00" and sound.presented(invocation) is invocation
    assert not sound.cancels("before_execute") and not sound.cancels("after_commit")
    assert sound.policy == ExecutionPolicy() and sound.policy.key("req-42", 3) == idempotency_key("req-42")


@pytest.mark.parametrize(
    ("switch", "seam"),
    [
        ({"proposal_tamper": "not_json"}, lambda f: f.parser_input(b"abcd") == b"ab"),
        ({"proposal_tamper": "extra_field"}, lambda f: f.parsed({}) == {"notify_all": True}),
        ({"tamper_digest": True}, lambda f: f.stored_approval("sha256:00") == "sha256:01"),
        (
            {"edit_after_approval": (("title", "x"),)},
            lambda f: f.presented(fixture_invocation()).invocation_id == "inv_02",
        ),
        ({"cancel_at": "after_commit"}, lambda f: f.cancels("after_commit") and not f.cancels("before_execute")),
        ({"new_key_per_attempt": True}, lambda f: f.policy.key("req-42", 2) == "req-42:create-event:2"),
    ],
)
def test_each_switch_changes_its_seam(switch, seam):
    assert seam(ToolFaults(**switch))


@pytest.mark.parametrize(("argument", "value"), [("proposal_tamper", "half"), ("cancel_at", "later")])
def test_a_bad_switch_is_refused_by_name(argument, value):
    with pytest.raises(ValueError, match=f"{argument} must be one of"):
        ToolFaults(**{argument: value})


def test_a_counted_below_zero_is_refused_by_name():
    with pytest.raises(ValueError, match="counted must be an integer >= 0"):
        processors.ProcessorContext(processors.SamplingConfig(), (), counted=-1)


PLANS = [(), ("lose_response",), ("not_committed", "deliver")]


def _trace(point: str, plan: tuple) -> list:
    outcome = run_schedule(FaultSchedule(plan, crashes=(CrashPlan(point),)))
    assert invariant_violations(outcome) == [] and outcome.service.executions == 1
    return [(e["event_type"], e["payload"].get("resolved_by")) for e in outcome.events]


def test_every_crash_point_gives_its_own_traces():
    """after_journal_write and after_send used to fire back to back before the send: one trace, two names."""
    traces = {point: [_trace(point, plan) for plan in PLANS] for point in CRASH_POINTS}
    same = [(a, b) for a in CRASH_POINTS for b in CRASH_POINTS if a < b and traces[a] == traces[b]]
    assert not same, f"crash points that give the same traces: {same}"
    # after the send the service has the request: the restart finds it by key and sends nothing again
    happy = traces["after_send"][0]
    assert ("external.committed", "query") in happy and ("invocation.retried", None) not in happy
