"""The fault catalogue of all three traces: every named fault, run and compared with its golden
trace by ``labkit.trace.divergence``, first diverges exactly where the fault declares
(``Fault.expected``: event, rule, field, suspect — one vocabulary, declared once per fault)."""

import pytest

from labkit.core import faults as suspects
from labkit.core.faults import FirstDivergence
from labkit.trace import catalogue
from labkit.trace.divergence import first_divergence

ALL = [(kind, name) for kind in catalogue.KINDS for name in catalogue.faults(kind)]


@pytest.mark.parametrize("kind", list(catalogue.KINDS))
def test_catalogue_has_at_least_five_faults_and_each_changes_the_config(kind):
    found = catalogue.KINDS[kind]
    assert len(found.faults) >= 5
    correct = found.faulty_config(None)
    for name in found.faults:
        assert found.faulty_config(name) != correct, f"{kind}/{name} leaves the configuration unchanged"


@pytest.mark.parametrize(("kind", "fault"), ALL)
def test_fault_first_diverges_where_it_declares(kind, fault):
    declared = catalogue.faults(kind)[fault].expected
    found = catalogue.diagnose(kind, fault)
    assert found is not None, f"{kind}/{fault} produced the golden trace"
    assert declared.matches(found.at), f"{kind}/{fault}: declared {declared}, found {found.at}\n{found.describe()}"


@pytest.mark.parametrize("kind", list(catalogue.KINDS))
def test_correct_run_equals_golden(kind):
    assert first_divergence(catalogue.golden(kind), catalogue.run_events(kind)) is None


def test_an_edited_run_leaves_the_next_run_alone():
    edited = catalogue.run_events("tool")
    payload = next(e["payload"] for e in edited if e["payload"])
    payload[next(iter(payload))] = "edited by a reader"
    edited[0]["event_type"] = "edited"
    assert first_divergence(catalogue.golden("tool"), catalogue.run_events("tool")) is None


def test_a_declaration_only_matches_its_own_divergence():
    declared = FirstDivergence("e05", "discrete_state", "masked_ids", suspects.PROCESSORS)
    assert declared.matches(FirstDivergence("e05", "discrete_state", "masked_ids (length)", suspects.PROCESSORS))
    assert declared.matches(FirstDivergence("e05", "discrete_state", "masked_ids[2]", suspects.PROCESSORS))
    for other in (
        FirstDivergence("e06", "discrete_state", "masked_ids", suspects.PROCESSORS),
        FirstDivergence("e05", "tensors", "masked_ids", suspects.PROCESSORS),
        FirstDivergence("e05", "discrete_state", "masked_ids_more", suspects.PROCESSORS),
        FirstDivergence("e05", "discrete_state", "tie_break", suspects.PROCESSORS),
        FirstDivergence("e05", "discrete_state", "masked_ids", suspects.MODEL_PATH),
    ):
        assert not declared.matches(other), other
    with pytest.raises(ValueError, match="rule must be one of"):
        FirstDivergence("e05", "discrete", "masked_ids", suspects.PROCESSORS)


def test_every_declared_suspect_is_one_a_contract_can_name():
    from labkit.trace.kinds import kind as trace_kind

    for kind, name in ALL:
        contract = trace_kind(kind).contract
        named = {
            *contract.suspects.values(),
            *contract.component_suspects.values(),
            *contract.field_suspects.values(),
            *contract.branch_suspects.values(),
        }
        suspect = catalogue.faults(kind)[name].expected.suspect
        assert suspect in named, f"{kind}/{name}: suspect {suspect!r} is not spelled as the {kind} contract spells it"


def test_unknown_kind_and_fault_are_named():
    with pytest.raises(ValueError, match="unknown trace kind 'audio'"):
        catalogue.faults("audio")
    with pytest.raises(ValueError, match="unknown text fault 'nope'"):
        catalogue.run_events("text", "nope")


def test_the_fault_tables_and_the_state_machine_are_read_only():
    from labkit.tools.states import TRANSITIONS, State

    with pytest.raises(TypeError):
        TRANSITIONS[State.PROPOSED] = frozenset(State)  # a reader loosening the machine
    for kind in catalogue.KINDS:
        with pytest.raises(TypeError):
            catalogue.KINDS[kind].faults["new"] = None  # the runs of every later cell would see it


def test_the_tables_pages_hand_out_are_read_only():
    from labkit.labs.cache_equivalence import MODES
    from labkit.text.model import SOURCE_LOGITS
    from labkit.tools.invariants import INVARIANTS

    with pytest.raises(TypeError):
        MODES["correct"] = "reset_rope_position"  # page 05's loop would report a broken decoder as correct
    with pytest.raises(TypeError):
        SOURCE_LOGITS[1][14] = 0.0  # pages 02 and 03 would compare the run with a number the source never gave
    with pytest.raises(TypeError):
        del INVARIANTS["integrity"]  # page 10's table would drop a promise the harness still checks


def test_a_new_fault_of_trace_three_is_one_entry_of_its_catalogue(monkeypatch, capsys):
    """A fault is data: one ``Fault`` line in ``labkit/tools/faults.py``'s catalogue (here: the same
    catalogue with one more entry) reaches the catalogue, the CLI and the first-divergence check."""
    import dataclasses

    from labkit.cli import main
    from labkit.core.faults import Fault
    from labkit.core.faults import catalogue as make_catalogue
    from labkit.tools import faults as tool_faults

    early_cancel = Fault(
        "cancel_before_execute",
        "the user cancels after approving, before anything is sent",
        {"faults": {"cancel_at": "before_execute"}},
        FirstDivergence("t08", "event_type_and_parent", "event_type", suspects.COMMIT_BOUNDARY),
    )
    added = make_catalogue(*tool_faults.FAULTS.values(), early_cancel)
    monkeypatch.setitem(catalogue.KINDS, "tool", dataclasses.replace(catalogue.KINDS["tool"], faults=added))
    assert list(catalogue.faults("tool"))[-1] == "cancel_before_execute"
    events = catalogue.run_events("tool", "cancel_before_execute")
    assert events[8]["event_type"] == "request.cancelled" and events[-1]["payload"]["request_status"] == "cancelled"
    assert early_cancel.expected.matches(first_divergence(catalogue.golden("tool"), events).at)
    assert main(["trace", "tool", "--list-faults"]) == 0 and "cancel_before_execute" in capsys.readouterr().out
