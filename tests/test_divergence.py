"""The first-divergence algorithm (§7.17) on small synthetic traces, rule by rule."""

import copy
import subprocess
import sys

import pytest

from labkit.core.events import TraceError, TraceRecorder
from labkit.reader.tables import state_table
from labkit.trace.divergence import RULES, TraceKindMismatch, first_divergence
from labkit.trace.kinds import contract_for, kind


def text_trace():
    rec = TraceRecorder("trace-text-test", prefix="e", clock=lambda: 0.0)
    rec.emit("gateway", "request.accepted", None, {"artifacts": {"model_id": "toy-decoder-v1"}})
    rec.emit(
        "model",
        "prefill.completed",
        None,
        {
            "cache_length": 12,
            "tensors": {
                "raw_logits": {"shape": [1, 20], "dtype": "float32", "position": 11, "values": [[14, 4.2], [15, 3.8]]}
            },
        },
    )
    rec.emit(
        "decoder",
        "token.selected",
        1,
        {
            "token_id": 14,
            "tensors": {
                "raw_logits": {"shape": [1, 20], "dtype": "float32", "position": 11, "values": [[14, 4.2], [15, 3.8]]}
            },
            "rng": {"counter_before": None, "counter_after": None},
        },
    )
    rec.emit("transport", "stream.delta", 1, {"sequence_no": 0, "utf8_hex": "e79fad"})
    rec.emit("executor", "external.committed", None, {"commit": {"status": "committed", "event_id": "x"}})
    return rec.events


def mutated(path, value, index):
    trace = copy.deepcopy(text_trace())
    target = trace[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return trace


def test_identical_traces_have_no_divergence():
    assert first_divergence(text_trace(), text_trace()) is None


@pytest.mark.parametrize(
    ("path", "value", "index", "rule", "suspect_part"),
    [
        (("event_type",), "token.chosen", 2, "event_type_and_parent", "processors"),
        (("parent_event_id",), "e00", 2, "event_type_and_parent", "processors"),
        (("payload", "artifacts", "model_id"), "toy-decoder-v2", 0, "artifact_ids", "artifact versions"),
        (("payload", "cache_length"), 13, 1, "discrete_state", "model / numeric"),
        (("payload", "tensors", "raw_logits", "values"), [[14, 4.3], [15, 3.8]], 1, "tensors", "model / numeric"),
        (("payload", "token_id"), 15, 2, "discrete_state", "processors or tie-break"),
        (("payload", "utf8_hex"), "e79fae", 3, "discrete_state", "detokenizer"),
        (("payload", "rng", "counter_before"), 4, 2, "rng_counter", "processors"),
        (("payload", "commit", "event_id"), "y", 4, "external_commit", "the executor component"),
    ],
)
def test_each_rule_fires_at_the_first_difference(path, value, index, rule, suspect_part):
    found = first_divergence(text_trace(), mutated(path, value, index))
    assert found is not None and found.index == index, found
    assert found.rule == rule
    assert suspect_part in found.suspect
    assert found.event_ids[0] == f"e{index:02d}"


def test_tensor_values_within_tolerance_are_equal():
    assert (
        first_divergence(
            text_trace(), mutated(("payload", "tensors", "raw_logits", "values"), [[14, 4.20004], [15, 3.8]], 1)
        )
        is None
    )


def test_selection_with_different_raw_logits_points_at_the_model():
    trace = mutated(("payload", "token_id"), 15, 2)
    trace[2]["payload"]["tensors"]["raw_logits"]["values"] = [[14, 3.0], [15, 3.8]]
    found = first_divergence(text_trace(), trace)
    assert found.rule == "discrete_state" and "model / numeric" in found.suspect


def test_rules_are_checked_in_the_declared_order():
    trace = mutated(("payload", "token_id"), 15, 2)
    trace[2]["payload"]["rng"]["counter_before"] = 9
    assert first_divergence(text_trace(), trace).rule == "discrete_state"
    assert RULES.index("discrete_state") < RULES.index("rng_counter")


def test_a_missing_event_is_a_divergence():
    found = first_divergence(text_trace(), text_trace()[:3])
    assert found.index == 3 and found.event_b is None and found.value_b == "<absent>"


def test_traces_of_different_kinds_are_refused():
    rec = TraceRecorder("trace-diffusion-test", prefix="d")
    rec.emit("text_encoder", "condition.encoded", None, {})
    with pytest.raises(TraceKindMismatch, match="compared through their contracts"):
        first_divergence(text_trace(), rec.events)


def test_malformed_trace_is_refused():
    bad = text_trace()
    bad[1]["parent_event_id"] = "e99"
    with pytest.raises(TraceError, match="parent_event_id"):
        first_divergence(text_trace(), bad)


def test_state_table_is_generated_from_the_contracts():
    table = state_table()
    assert table.headers == ["question", "Text trace", "Diffusion trace", "Tool trace"]
    assert table.rows[3][3] == kind("tool").contract.irreversible_point
    with pytest.raises(ValueError, match="no known trace kind"):
        contract_for([{"event_id": "z00"}])


@pytest.mark.slow
def test_cli_exit_codes(tmp_path):
    from labkit.core.events import write_jsonl

    a = write_jsonl(text_trace(), tmp_path / "a.jsonl")
    b = write_jsonl(mutated(("payload", "token_id"), 15, 2), tmp_path / "b.jsonl")

    def run(first, second):
        command = [sys.executable, "-m", "labkit", "trace", "diff", str(first), str(second)]
        return subprocess.run(command, capture_output=True, text=True)

    same = run(a, a)
    assert same.returncode == 0 and "identical" in same.stdout
    diff = run(a, b)
    assert diff.returncode == 1 and "rule    : discrete_state" in diff.stdout and "e02" in diff.stdout
    missing = run(a, tmp_path / "nope.jsonl")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    (tmp_path / "junk.jsonl").write_text("{oops\n", encoding="utf-8")
    junk = run(a, tmp_path / "junk.jsonl")
    assert junk.returncode == 2 and "line 1 is not JSON" in junk.stderr
