"""The event envelope of §7.1: recorder, JSON Lines, schema, and every bad-input case."""

import json

import numpy as np
import pytest

from labkit.core import events
from labkit.core.events import TraceError, TraceRecorder
from labkit.core.fixtures import fixture_path


def small_trace():
    rec = TraceRecorder("trace-test-001", prefix="e", clock=iter(range(100)).__next__)
    rec.emit("gateway", "request.accepted", None, {"request_id": "r1"})
    rec.emit("tokenizer", "input.tokenized", None, {"ids": np.array([1, 2, 7])})
    rec.emit("model", "prefill.completed", 0, {"cache_length": np.int64(12)}, parent="e00")
    return rec


def test_recorder_assigns_ordered_ids_and_parents():
    rec = small_trace()
    assert [e["event_id"] for e in rec.events] == ["e00", "e01", "e02"]
    assert [e["parent_event_id"] for e in rec.events] == [None, "e00", "e00"]
    assert rec.events[1]["payload"] == {"ids": [1, 2, 7]}
    assert rec.events[2]["payload"]["cache_length"] == 12


def test_wall_clock_is_kept_apart_from_the_envelope():
    rec = small_trace()
    assert rec.wall_clock == {"e00": 0, "e01": 1, "e02": 2}
    for event in rec.events:
        assert tuple(event) == events.ENVELOPE_FIELDS


def test_jsonl_round_trip_keeps_chinese_text(tmp_path):
    rec = small_trace()
    rec.emit("transport", "stream.delta", 1, {"text": "短波蓝光"})
    path = rec.write_jsonl(tmp_path / "t.jsonl")
    raw = path.read_text(encoding="utf-8")
    assert "短波蓝光" in raw and raw.count("\n") == 4
    assert events.read_jsonl(path) == rec.events


def test_schema_is_valid_draft_2020_12():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(events.envelope_schema())


def test_editing_the_schema_a_reader_is_given_changes_no_check():
    handed = events.envelope_schema()
    handed["properties"]["logical_step"]["type"] = "string"
    handed["additionalProperties"] = True
    event = events.read_jsonl(fixture_path("traces", "text.jsonl"))[0]
    for check in (events.check_envelope_fields, events.validate_envelope):
        with pytest.raises(events.TraceError, match="logical_step"):
            check(dict(event, logical_step="one"))
    assert events.envelope_schema() != handed


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: [{k: v for k, v in t[0].items() if k != "component"}], "lacks the field 'component'"),
        (lambda t: [t[0], dict(t[1], parent_event_id="e09")], "field 'parent_event_id'"),
        (lambda t: [dict(t[0], logical_step="one")], "field 'logical_step'"),
        (lambda t: [dict(t[0], payload=[])], "field 'payload'"),
        (lambda t: [t[0], dict(t[1], event_id="e00")], "field 'event_id': 'e00' appears twice"),
        (lambda t: [t[0], dict(t[1], trace_id="other")], "field 'trace_id'"),
        (lambda t: [dict(t[0], extra=1)], "Additional properties"),
        (lambda t: [t[0], dict(t[1], parent_event_id=None)], "only the first event may have no parent"),
        (lambda t: [], "at least one event"),
    ],
    ids=[
        "missing-field",
        "unknown-parent",
        "wrong-type",
        "payload-not-object",
        "duplicate-id",
        "mixed-trace-ids",
        "extra-field",
        "orphan",
        "empty",
    ],
)
def test_bad_traces_raise_clear_errors(mutate, message):
    trace = small_trace().events
    with pytest.raises(TraceError, match=message):
        events.validate_trace(mutate(trace))


def test_emit_refuses_unknown_parent_and_non_json_payload():
    rec = small_trace()
    with pytest.raises(TraceError, match="'e42' is not an earlier event"):
        rec.emit("x", "a.b", None, {}, parent="e42")
    with pytest.raises(TraceError, match="encode bytes explicitly"):
        rec.emit("x", "a.b", None, {"raw": b"\xe7"})
    with pytest.raises(TraceError, match="not JSON"):
        rec.emit("x", "a.b", None, {"obj": object()})
    with pytest.raises(TraceError, match="field 'event_type'"):
        rec.emit("x", "NotDotted", None, {})
    assert len(rec.events) == 3


def test_recorder_rejects_bad_trace_id_and_prefix():
    with pytest.raises(TraceError, match="trace_id"):
        TraceRecorder("")
    with pytest.raises(TraceError, match="prefix"):
        TraceRecorder("t", prefix="E1")


def test_read_jsonl_reports_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = events.dumps_event(small_trace().events[0])
    path.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(TraceError, match="line 2 is not JSON"):
        events.read_jsonl(path)
    with pytest.raises(TraceError, match="does not exist"):
        events.read_jsonl(tmp_path / "missing.jsonl")


def test_a_golden_trace_is_read_once_and_each_reader_gets_its_own_copy(tmp_path, monkeypatch):
    first = events.read_golden("text.jsonl")
    assert first == events.read_jsonl(fixture_path("traces", "text.jsonl"))
    first[0]["payload"]["edited"] = True  # a reader's edit stays in the reader's copy
    assert "edited" not in events.read_golden("text.jsonl")[0]["payload"]
    lines = fixture_path("traces", "text.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "text.jsonl").write_text("".join(lines), encoding="utf-8")
    monkeypatch.setenv("LABKIT_FIXTURES", str(tmp_path))
    assert len(events.read_golden("text.jsonl")) == len(lines)
    (tmp_path / "traces" / "text.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    assert len(events.read_golden("text.jsonl")) == 3  # a changed file is read again


def test_tensor_summary_shape_dtype_position_digest_and_stats():
    ids = np.array([[1, 2, 7]], dtype=np.int64)
    summary = events.tensor_summary(ids, position=[0, 2], digest=True)
    assert summary["shape"] == [1, 3] and summary["dtype"] == "int64"
    assert summary["position"] == [0, 2]
    assert summary["digest"] == events.tensor_summary(ids.copy(), digest=True)["digest"]
    assert summary["digest"] != events.tensor_summary(ids + 1, digest=True)["digest"]
    stats = events.tensor_summary(np.array([1.0, 2.0, 4.0], dtype=np.float32), stats=True)["summary"]
    assert stats == {"min": 1.0, "max": 4.0, "mean": 2.3333}
    json.dumps(summary)


def test_tensor_summary_never_writes_a_negative_zero():
    # A mean of ±1e-9 is the same value to 4 decimals on every BLAS kernel; JSON must agree too.
    for sign in (1.0, -1.0):
        stats = events.tensor_summary(np.array([sign * 1e-9, sign * 2e-9]), stats=True)["summary"]
        assert json.dumps(stats) == '{"min": 0.0, "max": 0.0, "mean": 0.0}'


# --- the recorder's direct check agrees with the Draft 2020-12 validator ---------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 30),
    st.text(max_size=6),
    st.sampled_from(["e00", "e01", "x9", "token.selected", "a.b.c", "Bad.Type", ""]),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({name: _values for name in events.ENVELOPE_FIELDS}, optional={"extra": st.integers()}))
def test_direct_check_and_jsonschema_agree(event):
    def verdict(check):
        try:
            check(dict(event))
            return True
        except TraceError:
            return False

    assert verdict(events.check_envelope_fields) == verdict(events.validate_envelope), event


def test_emitting_does_not_import_jsonschema():
    import subprocess
    import sys

    code = (
        "import sys; from labkit.core.events import TraceRecorder; r = TraceRecorder('t'); "
        "r.emit('c', 'a.b', 0, {'x': 1}); print('jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
