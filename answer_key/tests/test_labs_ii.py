"""The key of labs 07–13: every worked solution passes with the key loaded, in every reasonable form; a
near miss fails; an answer that fits only the public cases passes the public check and fails the key's
hidden cases; every check of a right answer takes well under a second."""

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import reset_attempts, without_key
from labkit.labs import report as reports
from labkit.labs import speculative

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
NAMES = (
    "informative_group_probability",
    "dual_clip_value",
    "rloo_advantages",
    "finite_direction",
    "gaussian_kl",
    "kl_from_logits",
    "verify_draft",
    "second_draft",
    "rejection_probability",
    "tokens_per_target_call",
    "break_even_draft_cost",
    "decode_step_lower_bound_ms",
    "quantised_batch8_ms",
    "moved_token_naive_average",
    "loss_scale_factors",
    "report_problems",
    "growth_exponent",
    "doubling_factor",
)


@pytest.fixture(autouse=True)
def fresh():
    reset_attempts()


@pytest.fixture(scope="module")
def worked():
    """answer_key/solutions/labs_ii.py, the worked solutions."""
    spec = importlib.util.spec_from_file_location("solutions_labs_ii_key", SOLUTIONS / "labs_ii.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_sections_hold_exactly_these_exercises():
    pages = {f"notebooks/11-labs/{p}.md" for p in ("07-grpo-and-ppo-clip", "08-kl-divergence")}
    pages |= {f"notebooks/11-labs/{p}.md" for p in ("09-speculative-sampling", "10-bandwidth-budget")}
    pages |= {f"notebooks/11-labs/{p}.md" for p in ("11-unequal-rank-gradients", "12-the-two-reports")}
    pages |= {"notebooks/11-labs/13-measuring-the-book.md"}
    mine = sorted(n for n, s in check.exercises().items() if s.page in pages)
    assert mine == sorted(NAMES)
    kinds = [check.exercises()[n].kind for n in NAMES]
    assert 3 * sum(k in ("extend", "derive") for k in kinds) >= len(kinds)


@pytest.mark.parametrize("name", NAMES)
def test_the_worked_solution_passes_with_the_key_and_within_a_second(worked, name):
    spec = check.exercises()[name]
    spec(getattr(worked, name))  # warm the lab's own runs (cached once per process)
    start = time.perf_counter()
    result = spec(getattr(worked, name))
    elapsed = time.perf_counter() - start
    assert result.passed and result.status == "passed", repr(result)
    assert elapsed < 1.0, f"{name}: {elapsed:.2f} s"


@pytest.mark.parametrize("name", [n for n in NAMES if check.exercises()[n].graded])
def test_a_graded_exercise_is_graded_on_hidden_cases_of_the_key(name):
    spec = check.exercises()[name]
    assert spec.keyed and spec.cases is not None
    assert all(label.startswith("hidden") for label, *_ in spec.cases())
    assert spec.reveal().text


# --- predictions: the right value in every form passes, a near miss fails ----------------------------------


@pytest.mark.parametrize(
    "form",
    [
        lambda v: v,
        lambda v: np.float64(v),
        lambda v: np.float32(v),
        lambda v: np.array(v),
        lambda v: round(v, 3),
    ],
)
@pytest.mark.parametrize("name", ["quantised_batch8_ms", "dual_clip_value", "rejection_probability"])
def test_a_right_prediction_passes_in_every_numeric_form(worked, name, form):
    assert check.exercises()[name](form(getattr(worked, name))).passed


def test_the_quantised_bound_takes_its_number_and_says_gb_and_gib_apart(worked):
    spec = check.exercises()["quantised_batch8_ms"]
    right = worked.quantised_batch8_ms
    assert spec(right * 1.019).passed and spec(right * 0.981).passed
    assert not spec(right * 1.021).passed and not spec(right * 0.979).passed
    assert not spec(11.0).passed  # 7 GB + 8 · 0.5 "GB", the old explanation's sum
    why = spec.why.format(answer=spec.answer())
    assert "GiB" in why and "0.537 GB" in why and "11.29" in why


def test_a_direction_word_passes_whatever_its_case_or_spaces():
    spec = check.exercises()["finite_direction"]
    assert spec(" PQ ").passed and not spec("qp").passed and not spec(True).passed


# --- answers that fit only the public cases --------------------------------------------------------------


def _only_public(worked):
    """(exercise, a candidate right on the public cases only) — the key's hidden cases must catch each."""
    sol = worked

    def robust_on_eight_points(contexts, times):  # least squares for any other number of measurements
        if len(contexts) == 8:
            return sol.growth_exponent(contexts, times)
        return float(np.polyfit(np.log(contexts), np.log(times), 1)[0])

    public_rates = {(), (1.0, 1.0, 1.0), (0.7,) * 5, (0.8,) * 3, (0.9, 0.7, 0.5, 0.3), (0.6,), (0.95, 0.0, 0.9)}
    public_rates |= {(0.99,) * 8}

    def remembered_rates(alphas):
        if tuple(alphas) in public_rates:
            return sol.tokens_per_target_call(alphas)
        return float(speculative.expected_tokens_per_target_call(float(np.mean(alphas)), len(alphas)))

    def lenient_report(report):  # the public damages only: no check of the string fields' types
        problems = sol.report_problems(report)
        return [p for p in problems if "must be a string" not in p and "gpu" not in p]

    return {
        "rloo_advantages": lambda r, v: sol.rloo_advantages(r, v) if r.shape[-1] <= 8 else np.zeros(r.shape),
        "informative_group_probability": lambda p, k: (
            0.5 if k == 5 and 0 < p < 1 else sol.informative_group_probability(p, k)
        ),
        "gaussian_kl": lambda a, b, c, d: sol.gaussian_kl(a, b, c, d) if abs(a) <= 5 else 0.0,
        "kl_from_logits": lambda zp, zq: sol.kl_from_logits(zp, zq) if zp.size <= 8 else 0.0,
        "verify_draft": lambda p, q, x, u, v: sol.verify_draft(p, q, x, u, v) if p.size <= 6 else x,
        "second_draft": lambda p, q: sol.second_draft(p, q) if p.size <= 6 else (np.zeros_like(p), p),
        "tokens_per_target_call": remembered_rates,
        "break_even_draft_cost": lambda a, k: (
            sol.break_even_draft_cost(a, k) if a in (0, 0.8, 0.5, 0.95, 0.3, 0.9) else 0
        ),
        "decode_step_lower_bound_ms": lambda b, c: sol.decode_step_lower_bound_ms(b, c) if len(c) < 9 else 0.0,
        "loss_scale_factors": lambda n: sol.loss_scale_factors(n) if n.shape[0] <= 4 else n / n.sum(),
        "report_problems": lenient_report,
        "growth_exponent": robust_on_eight_points,
    }


@pytest.mark.parametrize("name", [n for n in NAMES if check.exercises()[n].graded])
def test_an_answer_that_fits_only_the_public_cases_fails_the_key(worked, name):
    candidates = _only_public(worked)
    spec = check.exercises()[name]
    with without_key():
        public = spec(candidates[name])
    assert public.passed, f"the public check should not tell this one apart: {public!r}"
    graded = spec(candidates[name])
    assert not graded.passed and (graded.where or "").startswith("case “hidden"), repr(graded)


def test_the_labs_names_are_the_first_items_of_reports_labs(worked):
    assert worked.LAB_NAMES == [name for name, _ in reports.LABS]


def test_growth_exponent_is_graded_on_the_pages_measured_series_too(worked):
    from benchmarks import results
    from benchmarks.exercise import make_exercise

    exercise = make_exercise(results.load_result())
    assert [label for label, _ in exercise.cases()][-2:] == [
        "the reference's cached series",
        "the reference's recompute series",
    ]
    assert exercise(worked.growth_exponent).passed
    with without_key():
        assert make_exercise(results.load_result())(worked.growth_exponent).passed  # properties only
