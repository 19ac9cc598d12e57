"""The two JSON reports and their commands: keys, order, numbers, failure exit, refused samples."""

import ast
import inspect
import json
from datetime import UTC, datetime, timedelta

import pytest
from _helpers import report_differences

from labkit.cli import labs as cli_labs
from labkit.cli import main
from labkit.labs import report
from labkit.labs.common import LabCheckFailed, require_close

LABS_ORDER = [
    "ce_gradient",
    "masks",
    "causal_attention",
    "cache_equivalence",
    "dpo",
    "grpo",
    "kl",
    "speculative_sampling",
]
FAULTS_KEYS = [
    "status",
    "timestamp_shanghai",
    "runtime",
    "bandwidth_budget",
    "unequal_rank_gradients",
    "cache_faults",
    "wrong_rejection_fallback",
]
# Headline numbers of the source's reports: what the chapter's scripts computed when they
# were run once (the chapter prints the code, not these results).  Each is asserted at the
# lab's own tolerance: a discrepancy measure must stay under its bound, every other float
# must agree to SCRIPT_RUN_RTOL; the last bits belong to the machine's BLAS kernel.
SOURCE_HEADLINES = {
    # key: (script's value, absolute tolerance — the lab's stated bound for a discrepancy, else 0)
    ("labs", "ce_gradient", "max_abs_gradient_error"): (6.188938250772935e-12, 1e-9),
    ("labs", "cache_equivalence", "full_vs_cached_max_abs_logit_error"): (4.440892098500626e-16, 1e-12),
    ("labs", "dpo", "loss_nat"): (0.5981388693815918, 0.0),
    ("labs", "kl", "forward_kl_nat"): (0.19274475702175753, 0.0),
    ("labs", "speculative_sampling", "observed_acceptance_rate"): (0.801205, 0.0),
}
SCRIPT_RUN_RTOL = 1e-12


@pytest.fixture(scope="module")
def labs():
    return report.labs_report()


@pytest.fixture(scope="module")
def faults():
    return report.faults_report()


def test_labs_report_has_the_source_keys_in_order(labs):
    assert list(labs) == ["status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs"]
    assert labs["status"] == "passed" and labs["scope"] == "8 NumPy mechanism labs; no model training"
    assert list(labs["labs"]) == LABS_ORDER
    assert list(labs["runtime"]) == ["python", "numpy", "platform", "dtype"] and labs["runtime"]["dtype"] == "float64"
    assert 0 < labs["elapsed_seconds"] < 30


def test_labs_report_headlines_match_the_source(labs):
    for (_, lab, key), (source_value, bound) in SOURCE_HEADLINES.items():
        got = labs["labs"][lab][key]
        if bound:  # a discrepancy measure: under the lab's bound (the script's own was too)
            assert 0 <= got <= bound and source_value <= bound, f"{lab}.{key}: {got!r} exceeds {bound:g}"
        else:
            assert got == pytest.approx(source_value, rel=SCRIPT_RUN_RTOL, abs=0), (
                f"{lab}.{key}: {got!r} vs source {source_value!r} (off by {abs(got - source_value):.3e})"
            )
    observed = labs["labs"]["speculative_sampling"]["observed_distribution"]
    assert observed == [0.599475, 0.300205, 0.10032], f"observed distribution {observed}"


def test_timestamp_is_shanghai_time(labs, faults):
    for stamp in (labs["timestamp_shanghai"], faults["timestamp_shanghai"]):
        parsed = datetime.fromisoformat(stamp)
        assert parsed.utcoffset() == timedelta(hours=8), f"{stamp} is not at UTC+08:00"
    noon_utc = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # midsummer: Shanghai keeps no daylight saving
    assert report.shanghai_timestamp(noon_utc) == "2026-07-01T20:00:00+08:00"


def test_faults_report_has_the_source_keys_in_order(faults):
    assert list(faults) == FAULTS_KEYS and faults["status"] == "passed"
    modes = [c["mode"] for c in faults["cache_faults"]["cases"]]
    assert modes == ["correct", "reset_rope_position", "copy_layer1_cache_to_layer2", "top_left_rectangular_mask"]


def test_a_failing_check_marks_the_report_failed_and_stops():
    def broken():
        require_close("dpo analytic gradient vs finite difference", [0.1], [0.2], atol=1e-9)

    ran = []
    result = report.labs_report(
        runners={"kl": lambda: ran.append("kl") or {"ok": 1}, "dpo": broken, "grpo": lambda: ran.append("grpo") or {}}
    )
    assert result["status"] == "failed" and result["failed_lab"] == "dpo"
    assert "element [0] is 0.1, expected 0.2, off by 1.000e-01" in result["failure"]
    assert ran == ["kl"] and list(result["labs"]) == ["kl"]


def test_require_close_names_the_element_and_the_gap():
    with pytest.raises(LabCheckFailed, match=r"x: element \[1, 0\] is 3.5, expected 3.0, off by 5.000e-01"):
        require_close("x", [[1.0, 2.0], [3.5, 4.0]], [[1.0, 2.0], [3.0, 4.0]], atol=1e-9)
    require_close("x", [1.0, 2.0], [1.0, 2.0 + 1e-12], atol=1e-9)


def test_report_differences_sees_a_changed_number_a_key_order_and_an_int_for_a_float():
    reference = {"a": 1.0, "b": [0.5, 0.25]}
    assert report_differences({"a": 1.0, "b": [0.5, 0.25]}, reference) == []
    assert report_differences({"a": 1.0, "b": [0.5, 0.26]}, reference) == [
        "b[1]: 0.26 vs reference 0.25 (off by 1.000e-02)"
    ]
    assert report_differences({"b": [0.5, 0.25], "a": 1.0}, reference)[0].startswith("report: keys")
    assert report_differences({"a": 1, "b": [0.5, 0.25]}, reference) == ["a: 1 vs reference 1.0"]


def test_without_volatile_fields_keeps_only_what_is_the_same_everywhere(labs):
    kept = report.without_volatile_fields(labs)
    assert "timestamp_shanghai" not in kept and "elapsed_seconds" not in kept
    assert kept["runtime"] == {"dtype": "float64"} and kept["labs"] is labs["labs"]


def test_labs_command_writes_the_report_and_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "nested" / "labs.json"
    assert main(["labs", "--output", str(out), "--samples", "10000"]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["status"] == "passed" and written["labs"]["speculative_sampling"]["samples"] == 10000
    printed = capsys.readouterr().out
    assert printed.startswith("PASS: 8 mechanism labs") and "Report: " in printed


def test_faults_command_writes_the_report(tmp_path, capsys):
    out = tmp_path / "faults.json"
    assert main(["faults", "--output", str(out)]) == 0
    assert list(json.loads(out.read_text(encoding="utf-8"))) == FAULTS_KEYS
    assert "Wrong rejection fallback" in capsys.readouterr().out


@pytest.mark.parametrize("samples", ["9999", "0", "many"])
def test_labs_command_refuses_too_few_samples(samples, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["labs", "--samples", samples])
    assert stop.value.code == 2
    assert "argument --samples" in capsys.readouterr().err


def test_labs_command_exits_non_zero_when_a_check_fails(tmp_path, capsys, monkeypatch):
    real = report.labs_report

    def failing(samples):
        return real(samples, runners={"kl": lambda: (_ for _ in ()).throw(LabCheckFailed("kl: broken on purpose"))})

    monkeypatch.setattr(report, "labs_report", failing)
    out = tmp_path / "labs.json"
    assert main(["labs", "--output", str(out)]) == 1
    assert "FAIL: lab 'kl': kl: broken on purpose" in capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8"))["status"] == "failed"


def test_the_command_and_the_report_agree_on_the_sample_floor():
    assert cli_labs.DEFAULT_SAMPLES == report.DEFAULT_SAMPLES
    with pytest.raises(ValueError, match=f"samples must be at least {cli_labs.MIN_SAMPLES}"):
        report.labs_report(samples=cli_labs.MIN_SAMPLES - 1)
    with pytest.raises(ValueError, match=f"samples must be at most {cli_labs.MAX_SAMPLES}"):
        report.labs_report(samples=cli_labs.MAX_SAMPLES + 1)


def test_both_commands_write_passing_reports_and_refuse_too_few_samples(tmp_path, capsys):
    assert main(["labs", "--output", str(tmp_path / "l.json"), "--samples", "10000"]) == 0
    assert main(["faults", "--output", str(tmp_path / "f.json")]) == 0
    assert json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))["status"] == "passed"
    with pytest.raises(SystemExit) as stop:
        main(["labs", "--samples", "9999"])
    assert stop.value.code == 2 and "must be at least 10000" in capsys.readouterr().err


def test_faults_command_exits_non_zero_when_a_check_fails(tmp_path, capsys, monkeypatch):
    real = report.faults_report

    def broken_bandwidth():
        require_close("bandwidth KV bytes vs 2**30", 2**30 + 1, 2**30)

    monkeypatch.setattr(report, "faults_report", lambda: real(runners={"bandwidth_budget": broken_bandwidth}))
    out = tmp_path / "faults.json"
    assert main(["faults", "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "FAIL: lab 'bandwidth_budget': bandwidth KV bytes vs 2**30: element value is 1073741825.0" in err
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["status"] == "failed" and written["failed_lab"] == "bandwidth_budget"


def test_the_discrepancy_bounds_are_the_labs_tolerances_not_copies():
    """Each bound a page shows a measure against is the constant its lab checks with (one source)."""
    tree = ast.parse(inspect.getsource(report))
    bounds = next(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "DISCREPANCY_BOUNDS" for t in node.targets)
    )
    typed = [ast.unparse(v) for v in bounds.values if isinstance(v, ast.Constant)]
    assert not typed, f"DISCREPANCY_BOUNDS types tolerances its labs hold: {typed}"
