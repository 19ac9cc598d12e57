"""The benchmark harness (benchmarks/): its logic, its JSON shape and a tiny smoke run.

No timing is asserted here — machines are shared and noisy; the numbers live in
benchmarks/reference/ and are produced by ``python benchmarks/run.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import book, fit, results, stats
from benchmarks.compare import report_gaps
from benchmarks.labs_vs_baseline import SOURCE_DIR, extract_source_scripts

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ stats
def test_summarize_gives_median_min_max_and_count():
    assert stats.summarize([0.3, 0.1, 0.2, 0.9]) == {"median": 0.25, "min": 0.1, "max": 0.9, "runs": 4}


@pytest.mark.parametrize(
    "bad, words", [([], "at least one"), ([0.1, float("nan")], "finite"), ([-1.0], "non-negative")]
)
def test_summarize_rejects_bad_samples_by_name(bad, words):
    with pytest.raises(ValueError, match="samples") as info:
        stats.summarize(bad)
    assert words in str(info.value)


def test_time_call_rejects_bad_repeats():
    with pytest.raises(ValueError, match="repeats must be a positive integer, got 0"):
        stats.time_call(lambda: None, repeats=0)


def test_interleaved_runs_contenders_round_by_round():
    order = []
    result = stats.interleaved(
        {"a": lambda: order.append("a") or 1.0, "b": lambda: order.append("b") or 3.0}, repeats=3
    )
    assert order == ["a", "b"] * 3
    assert result["b"] == {"median": 3.0, "min": 3.0, "max": 3.0, "runs": 3}
    assert stats.ratio(result["b"], result["a"]) == 3.0


def test_scaled_and_ratio_handle_missing_values():
    assert stats.scaled(None, 1000) is None
    assert stats.ratio(None, {"median": 1.0}) is None
    assert stats.scaled({"median": 0.002, "min": 0.001, "max": 0.003, "runs": 2}, 1000) == pytest.approx(
        {"median": 2.0, "min": 1.0, "max": 3.0, "runs": 2}
    )


def test_run_command_reports_a_failing_command_with_its_stderr():
    with pytest.raises(stats.CommandFailed, match="exited with 3: boom"):
        stats.run_command([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])
    assert stats.run_command([sys.executable, "-c", "import sys; sys.exit(1)"], ok_codes=(0, 1)) >= 0


# -------------------------------------------------------------------------------- fits
@settings(max_examples=25, deadline=None)
@given(st.floats(-2.0, 2.0), st.floats(1e-4, 10.0))
def test_linear_fit_recovers_an_exact_line(intercept, slope):
    x = np.array([16, 32, 64, 128, 256], dtype=float)
    line = fit.linear_fit(x, intercept + slope * x)
    assert abs(line["slope"] - slope) <= 1e-9 * max(1.0, slope), f"slope off by {line['slope'] - slope:.3e}"
    assert abs(line["intercept"] - intercept) <= 1e-7, f"intercept off by {line['intercept'] - intercept:.3e}"
    assert line["r2"] == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 2.5), st.floats(1e-3, 1e3))
def test_power_fit_recovers_the_exponent_of_an_exact_power_law(k, c):
    x = np.array([16, 64, 256, 1024, 2048], dtype=float)
    power = fit.power_fit(x, c * x**k)
    assert abs(power["exponent"] - k) <= 1e-9, f"exponent {power['exponent']!r} vs {k!r}"
    assert power["coefficient"] == pytest.approx(c, rel=1e-8)


@pytest.mark.parametrize(
    "k, label",
    [(0.0, "flat-ish"), (0.49, "flat-ish"), (0.6, "sub-linear"), (0.81, "linear or worse"), (2.0, "linear or worse")],
)
def test_growth_label_thresholds(k, label):
    assert fit.growth_label(k) == label


@pytest.mark.parametrize(
    "x, y, message",
    [
        ([1], [1], "at least 2 points"),
        ([1, 1], [1, 2], "two distinct"),
        ([1, 2], [1, 2, 3], "one length"),
        ([0, 2], [1, 2], "positive"),
    ],
)
def test_fits_reject_bad_points(x, y, message):
    with pytest.raises(ValueError, match=message):
        fit.power_fit(x, y)


# ----------------------------------------------------------------------- comparisons
def test_report_gaps_names_the_path_and_the_gap():
    expected = {"labs": {"a": [1.0, 2.0], "b": "x"}, "timestamp_shanghai": "t1"}
    assert report_gaps({"labs": {"a": [1.0, 2.0], "b": "x"}, "timestamp_shanghai": "t2"}, expected) == []
    gaps = report_gaps({"labs": {"a": [1.0, 2.5], "b": "x"}}, expected)
    assert gaps == ["report.labs.a[1]: 2.5 vs expected 2.0 (off by 5.000e-01, allowed 3.0e-09)"]
    assert "keys only in actual ['c']" in report_gaps({"labs": {"a": [1.0, 2.0], "b": "x", "c": 1}}, expected)[0]


def test_baseline_script_reports_equal_labkit_labs_and_faults_reports():
    """benchmarks/baseline_labs.py (left) does the same work as labkit's two reports (right)."""
    import importlib.util

    from labkit.labs.report import faults_report, labs_report

    spec = importlib.util.spec_from_file_location("baseline_labs", REPO / "benchmarks" / "baseline_labs.py")
    baseline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baseline)
    gaps = report_gaps(baseline.labs_report(20_000), labs_report(samples=20_000), path="labs")
    gaps += report_gaps(baseline.faults_report(), faults_report(), path="faults")
    assert gaps == [], "baseline vs labkit:\n" + "\n".join(gaps)


def test_baseline_script_imports_nothing_from_labkit():
    text = (REPO / "benchmarks" / "baseline_labs.py").read_text(encoding="utf-8")
    assert "import labkit" not in text and "from labkit" not in text


def test_source_script_extraction_refuses_a_chapter_without_the_scripts(tmp_path):
    chapter = tmp_path / "chapter.txt"
    chapter.write_text("11｜a title\n\nno code here\n", encoding="utf-8")
    with pytest.raises(ValueError, match="found 0"):
        extract_source_scripts(chapter, tmp_path / "out")


@pytest.mark.skipif(not (SOURCE_DIR / "001_c3871fa65bf8cf78.txt").exists(), reason="source chapter not on this machine")
def test_source_script_extraction_yields_two_compilable_scripts(tmp_path):
    scripts = extract_source_scripts(SOURCE_DIR / "001_c3871fa65bf8cf78.txt", tmp_path)
    assert sorted(scripts) == ["fault_injection.py", "mechanism_labs.py"]
    assert "import mechanism_labs" in scripts["fault_injection.py"].read_text(encoding="utf-8")
    assert all(p.parent == tmp_path for p in scripts.values())


# ------------------------------------------------------------------------------ book
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite>
<testcase classname="notebooks.11-labs.01-x.ipynb" name="Cell 1" time="0.500" />
<testcase classname="notebooks.11-labs.01-x.ipynb" name="Cell 0" time="1.250" />
<testcase classname="notebooks.07-traces.02-y.ipynb" name="Cell 0" time="0.750"><failure message="diff"/></testcase>
<testcase classname="tests.test_other" name="test_z" time="9.0" />
</testsuite></testsuites>"""


def test_junit_cell_times_follow_cell_order_per_notebook(tmp_path):
    xml = tmp_path / "j.xml"
    xml.write_text(JUNIT, encoding="utf-8")
    nbs = ["notebooks/11-labs/01-x.ipynb", "notebooks/07-traces/02-y.ipynb"]
    assert book.junit_cell_times(xml, nbs) == {nbs[0]: [1.25, 0.5], nbs[1]: [0.75]}
    assert book.junit_failures(xml) == ["notebooks.07-traces.02-y.ipynb::Cell 0"]


def test_floor_notebooks_are_one_cell_with_a_stored_output(tmp_path):
    import nbformat

    paths = book.write_floor_notebooks(tmp_path, 3)
    assert [p.name for p in paths] == ["floor-00.ipynb", "floor-01.ipynb", "floor-02.ipynb"]
    nb = nbformat.read(paths[0], as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["1 + 1"]
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "2"
    with pytest.raises(ValueError, match="count must be a positive integer, got 0"):
        book.write_floor_notebooks(tmp_path, 0)


def test_the_figures_floor_adds_the_pyplot_import_and_one_figure_per_stored_picture(tmp_path):
    import nbformat

    paths = book.write_figures_floor_notebooks(tmp_path, [0, 2])
    plain, drawing = (nbformat.read(p, as_version=4) for p in paths)
    assert [c.source for c in plain.cells] == ["1 + 1"]
    assert [c.source for c in drawing.cells] == ["1 + 1", book.FIGURE_IMPORT, book.FIGURE_CELL, book.FIGURE_CELL]
    with pytest.raises(ValueError, match="counts must be integers ≥ 0"):
        book.write_figures_floor_notebooks(tmp_path / "again", [1, -1])
    # the counts come from the stored pages: page 05 of the traces shows three pictures, the preface none
    assert book.pictures(REPO / "notebooks/07-traces/05-diffusion-denoising-and-decoding.ipynb") == 3
    assert book.pictures(REPO / "notebooks/00-preface.ipynb") == 0


def test_nbval_command_uses_the_flags_of_make_test_serially():
    argv = book.nbval_command(["a.ipynb"], Path("j.xml"))
    assert argv[1:3] == ["-m", "pytest"]
    joined = " ".join(argv)
    assert "--nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg" in joined
    assert "-n" not in argv and argv[-1] == "a.ipynb" and "--junitxml=j.xml" in argv
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--nbval --nbval-current-env" in makefile and "--nbval-sanitize-with tests/nbval_sanitize.cfg" in makefile


def test_book_notebooks_lists_every_stored_notebook():
    found = book.book_notebooks(REPO)
    assert found and all(str(p).startswith("notebooks/") and p.suffix == ".ipynb" for p in found)
    assert found == sorted(found)


# ----------------------------------------------------------------- result and smoke run
def test_quick_smoke_run_gives_a_valid_result_with_every_section(tmp_path):
    from benchmarks.run import SECTIONS, main, measure

    result = measure(["scaling"], quick=True, repeats=1, contexts=[4, 8, 16])
    results.validate(result)
    assert [k for k in SECTIONS if k not in result] == []
    assert result["scaling"]["available"] and result["scaling"]["max_abs_logit_gap"] <= 1e-10
    assert len(result["scaling"]["cached_ms"]) == 3
    for section in ("book", "labs", "diffusion_stages"):
        assert result[section] == {**result[section], "available": False, "reason": "not selected in this run"}
    assert json.loads(json.dumps(result)) == result
    text = results.format_table(result)
    assert "decode step with KV cache, T=16" in text and "not available" in text
    out = tmp_path / "r.json"
    assert main(["--quick", "--only", "scaling", "--contexts", "4,8", "--output", str(out)]) == 0
    results.validate(json.loads(out.read_text(encoding="utf-8")))


def test_schema_names_the_missing_section():
    result = results.load_result()
    del result["labs"]
    with pytest.raises(ValueError, match=r"\(top level\): 'labs' is a required property"):
        results.validate(result)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--only", "nope"], "comma-separated list of book"),
        (["--contexts", "1,8"], "context lengths"),
        (["--repeats", "0"], "positive integer"),
    ],
)
def test_run_rejects_bad_arguments_by_name(argv, words, capsys):
    from benchmarks.run import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert words in capsys.readouterr().err


def test_every_reference_result_has_the_current_shape_and_its_own_summary():
    files = results.reference_files()
    assert files, "benchmarks/reference/ holds no reference result"
    for path in files:
        stored = json.loads(path.read_text(encoding="utf-8"))
        results.validate(stored)
        assert results.summary_rows(stored) == stored["summary"], f"{path.name}: summary out of step"
        assert path.name == results.reference_name(stored)


def test_decoder_scaling_refuses_bad_contexts():
    from benchmarks.scaling import check_contexts

    with pytest.raises(ValueError, match="at least two lengths"):
        check_contexts([16])
    with pytest.raises(ValueError, match="integer ≥ 2, got 1"):
        check_contexts([1, 16])


# ------------------------------------------------------------------------- exercise
# (a right answer, graded with the measured series, is in answer_key/tests/test_labs_ii.py: a test that holds
# a right answer stays out of tests/, which a class copy ships)


@pytest.mark.parametrize(
    "wrong, where",
    [
        (lambda contexts, times_ms: float(np.polyfit(contexts, times_ms, 1)[0]), "a linear curve"),
        (lambda contexts, times_ms: float(np.polyfit(np.log(contexts), np.log(times_ms), 1)[1]), "a flat curve"),
        (lambda contexts, times_ms: float(np.polyfit(np.log2(contexts), np.log(times_ms), 1)[0]), "a linear curve"),
    ],
)
def test_growth_exponent_exercise_points_at_the_concept(wrong, where):
    from benchmarks.exercise import make_exercise

    verdict = make_exercise(None)(wrong)
    assert not verdict.passed and verdict.where.startswith(f"case “{where}") and verdict.hint, repr(verdict)


def test_growth_exponent_exercise_stub_says_not_yet_implemented():
    from benchmarks.exercise import make_exercise

    def stub(contexts, times_ms):
        raise NotImplementedError("your code here")

    verdict = make_exercise(None)(stub)
    assert not verdict.passed and verdict.message.startswith("not yet implemented")


# --------------------------------------------------------------------------- figures
def test_local_exponents_of_an_exact_power_law_are_its_exponent():
    from benchmarks.figures import local_exponents

    k = local_exponents([16, 32, 64, 128], [3.0 * t**1.5 for t in (16, 32, 64, 128)])
    assert k[0] is None
    assert all(abs(x - 1.5) <= 1e-12 for x in k[1:]), f"local exponents {k[1:]} vs 1.5"


def test_page_tables_render_from_the_reference_result():
    from benchmarks import figures

    result = results.load_result()
    tables = [
        figures.summary_table_rows,
        figures.scaling_table_rows,
        figures.fit_table_rows,
        figures.stage_table_rows,
        figures.book_table_rows,
        figures.book_split_rows,
        figures.labs_table_rows,
        figures.per_lab_table_rows,
        figures.import_table_rows,
    ]
    for table in tables:
        rows = table(result)
        assert rows and len({len(r) for r in rows}) == 1, f"{table.__name__} gave ragged or no rows"
    assert figures.scaling_sentence(result).startswith(f"At T = {result['scaling']['contexts'][-1]}")
    assert figures.measured_on(result).startswith(f"measured {result['measured_at'][:10]} on ")


def test_every_labkit_lab_has_a_baseline_function():
    """labkit.labs.report's LABS + FAULTS (left) each map to a function of the baseline script (right)."""
    from benchmarks.labs_vs_baseline import BASELINE_FUNCTIONS, _load_baseline
    from labkit.labs.report import FAULTS, LABS

    keys = [key for key, _ in (*LABS, *FAULTS)]
    assert sorted(BASELINE_FUNCTIONS) == sorted(keys), "lab keys without a baseline function or vice versa"
    baseline = _load_baseline()
    missing = [name for name in BASELINE_FUNCTIONS.values() if not callable(getattr(baseline, name, None))]
    assert missing == [], f"baseline_labs.py lacks {missing}"


def test_staged_diffusion_png_equals_run_diffusion_png():
    """The stages timed one by one (left) produce the trace's own PNG (right), byte for byte."""
    from benchmarks.diffusion_stages import STAGES, _staged_once
    from labkit.diffusion.pipeline import run_diffusion

    spent, png = _staged_once()
    assert list(spent) == list(STAGES) and all(v >= 0 for v in spent.values())
    trace_png = run_diffusion().png
    assert png == trace_png, f"staged PNG ({len(png)} bytes) differs from the trace's ({len(trace_png)} bytes)"


def test_player_table_reads_a_stored_result_and_judges_each_host_on_its_target(tmp_path):
    from benchmarks import players

    result = {
        "steps": 3,
        "harness": {
            "available": True,
            "target_ms": 16.0,
            "players": [
                {"player": "decode@03", "control": "next", "work_ms": 4.04, "frame_ms": 9.3},
                {"player": "latents@05", "control": "back", "work_ms": 17.0, "frame_ms": 20.0},
            ],
        },
        "jupyterlab": {
            "available": True,
            "target_ms": 50.0,
            "players": [{"player": "decode", "control": "next", "work_ms": 17.0, "frame_ms": 25.0}],
        },
    }
    assert players.table_rows(result) == [
        ["decode@03", "harness", "next", "4.0", "9.3", "≤ 16 ms: yes"],
        ["latents@05", "harness", "back", "17.0", "20.0", "≤ 16 ms: no"],
        ["decode", "JupyterLab", "next", "17.0", "25.0", "≤ 50 ms: yes"],
    ]
    (tmp_path / "2026-12-01-a.json").write_text(json.dumps(result))
    assert players.load_reference(tmp_path)["steps"] == 3
    with pytest.raises(FileNotFoundError, match="benchmarks/players.py --reference"):
        players.load_reference(tmp_path / "none")


def test_the_stored_player_reference_covers_every_embedded_player():
    from benchmarks import players
    from booktools.players import embeds

    stored = {r["player"] for r in players.load_reference()["harness"]["players"]}
    expected = {f"{e.name}@{e.page.rsplit('/', 1)[-1].removesuffix('.md')}" for e in embeds()}
    assert stored == expected


@pytest.mark.slow
def test_the_torture_entry_reports_its_counts_and_violations_in_a_valid_result():
    from benchmarks.run import measure
    from benchmarks.torture import torture_run

    small = torture_run(kills=5, races=2)
    assert small["available"] and small["kills"] >= 5 and small["violations"] == 0
    assert small["race_requests"] == 2 * 2 * small["clients"]
    result = measure(["scaling"], quick=True, repeats=1, contexts=[4, 8])
    assert result["torture"]["available"] is False, "not selected: no run"
    result["torture"] = small
    result["summary"] = results.summary_rows(result)
    results.validate(result)
    assert "torture: violations in" in results.format_table(result)
    assert [r["meets_target"] for r in result["summary"] if r["measure"].startswith("torture: violations")] == [True]
    del result["torture"]
    results.validate(result)  # results measured before the entry existed stay valid
