"""Trace two's exercises with the key: the worked solutions pass, right answers pass in every reasonable
form, near misses fail, and the key's hidden cases catch answers fitted to the public checks."""

import math

import numpy as np
import pytest

import answer_key  # noqa: F401  (attaches the key)
import labkit.check as check
from labkit.check.core import without_key
from labkit.diffusion import ddim_step

NAMES = (
    "counter_offset_first_event",
    "shared_latent_numbers",
    "cfg_scale_one",
    "recover_guidance_scale",
    "x0_fed_as_epsilon",
    "ddim_v_update",
)
GRADED = ("shared_latent_numbers", "recover_guidance_scale", "ddim_v_update")


@pytest.fixture(scope="module")
def solved(solution):
    return solution("trace_two")


@pytest.fixture(scope="module")
def solution():
    import importlib.util
    from pathlib import Path

    def load(stem):
        path = Path(__file__).resolve().parents[1] / "solutions" / f"{stem}.py"
        spec = importlib.util.spec_from_file_location(f"solutions_{stem}_trace_two_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.mark.parametrize("name", NAMES)
def test_the_worked_solution_passes_with_the_key(name, solved):
    result = check.exercises()[name](getattr(solved, name))
    assert result.passed and result.status == "passed", repr(result)


def test_the_graded_exercises_carry_a_point_and_the_predictions_none():
    specs = check.exercises()
    assert {n: specs[n].graded for n in NAMES} == {n: n in GRADED for n in NAMES}
    assert sum(specs[n].kind in ("extend", "derive") for n in NAMES) * 3 >= len(NAMES)


@pytest.mark.parametrize("name", GRADED)
def test_the_key_adds_hidden_cases_and_a_reference(name):
    spec = check.exercises()[name]
    assert spec.reference is not None and len(spec.cases()) >= 4
    with without_key():
        assert spec.reference is None and spec.cases is None and spec.properties is not None


@pytest.mark.parametrize("name", NAMES)
def test_the_full_check_of_a_right_answer_takes_under_a_second(name, solved):
    import time

    spec = check.exercises()[name]
    spec(getattr(solved, name))  # warm: fixtures, models, the golden trace
    start = time.perf_counter()
    assert spec(getattr(solved, name)).passed
    assert time.perf_counter() - start < 1.0


# -- right answers in every reasonable form (issue 40 item 5) ------------------------------------------


@pytest.mark.parametrize("answer", ["d01", "D01", " d01 ", "d01\n"])
def test_counter_offset_first_event_takes_the_id_in_any_case_and_spacing(answer):
    assert check.counter_offset_first_event(answer).passed


@pytest.mark.parametrize(
    "answer",
    ["conditional", "Conditional", "positive", "the conditional prediction", "ε_pos", "conditional branch", " COND "],
)
def test_cfg_scale_one_takes_either_name_of_the_branch(answer):
    assert check.cfg_scale_one(answer).passed, answer


def _z1():
    a = math.sqrt(0.25)
    x0 = (1.0 - math.sqrt(0.75) * 1.0) / a
    return 0.8 * x0 + 0.6 * 1.0


@pytest.mark.parametrize(
    "form",
    [
        lambda z: (z, -z),
        lambda z: [z, -z],
        lambda z: np.array([z, -z]),
        lambda z: np.array([z, -z], dtype=np.float32),
        lambda z: (np.float64(z), np.float32(-z)),
        lambda z: (round(z, 2), round(-z, 2)),
    ],
)
def test_x0_fed_as_epsilon_takes_a_tuple_a_list_or_an_array(form):
    assert check.x0_fed_as_epsilon(form(_z1())).passed


@pytest.mark.parametrize("off", [0.0101, -0.0101, 0.02])
def test_x0_fed_as_epsilon_just_outside_its_tolerance_fails(off):
    result = check.x0_fed_as_epsilon((_z1() + off, -_z1()))
    assert not result.passed and result.status == "failed"


def test_x0_fed_as_epsilon_just_inside_its_tolerance_passes():
    assert check.x0_fed_as_epsilon((_z1() + 0.0099, -_z1() - 0.0099)).passed


def test_shared_latent_numbers_takes_numpy_integers_and_integral_floats(solved):
    assert check.shared_latent_numbers(lambda s, a, b: np.int64(solved.shared_latent_numbers(s, a, b))).passed
    assert check.shared_latent_numbers(lambda s, a, b: float(solved.shared_latent_numbers(s, a, b))).passed


def test_recover_guidance_scale_takes_numpy_scalars_lists_and_arrays(solved):
    for form in (tuple, list, lambda pair: (np.float32(pair[0]), np.float64(pair[1])), lambda p: tuple(np.array(p))):
        assert check.recover_guidance_scale(lambda b, g, form=form: form(solved.recover_guidance_scale(b, g))).passed


def test_ddim_v_update_in_the_latents_own_precision_is_accepted():
    """float32 arithmetic on the loop's float32 latents rounds otherwise than the library's float64 in the
    last bits: not a mistake at the latent level (the check compares latents under a tolerance)."""

    def in_own_precision(z_t, v, t, prev_t, alpha_bars):
        kind = np.asarray(z_t).dtype.type
        a, a_prev = kind(alpha_bars[t]), kind(1.0 if prev_t is None else alpha_bars[prev_t])
        x0 = np.sqrt(a) * z_t - np.sqrt(kind(1) - a) * v
        eps = np.sqrt(kind(1) - a) * z_t + np.sqrt(a) * v
        return (np.sqrt(a_prev) * x0 + np.sqrt(kind(1) - a_prev) * eps).astype(z_t.dtype), x0.astype(z_t.dtype)

    result = check.ddim_v_update(in_own_precision)
    assert result.passed, repr(result)


# -- near misses fail -----------------------------------------------------------------------------------


def test_recover_guidance_scale_off_by_a_millionth_fails(solved):
    def off(batch, guided):
        s, w = solved.recover_guidance_scale(batch, guided)
        return s * (1 + 2e-6), w + 2e-6 * s

    assert not check.recover_guidance_scale(off).passed


def test_ddim_v_update_that_keeps_a_trace_of_noise_at_the_end_fails(solved):
    def final_not_one(z_t, v, t, prev_t, alpha_bars):
        return solved.ddim_v_update(z_t, v, t, prev_t if prev_t is not None else 0, alpha_bars)

    assert not check.ddim_v_update(final_not_one).passed


# -- the hidden cases catch answers fitted to the public checks ----------------------------------------


def _fits_the_public_cases(name, candidate):
    with without_key():
        assert check.exercises()[name](candidate).passed, f"{name}: the fitted answer should pass the public check"
    return check.exercises()[name](candidate)


def test_a_table_of_the_public_counts_fails_the_hidden_cases():
    from labkit.check.trace_two import SHARED_CASES, _drawn

    seen = {(s, a, b): np.intersect1d(_drawn(s, a), _drawn(s, b)).size for s, a, b in SHARED_CASES}
    result = _fits_the_public_cases("shared_latent_numbers", lambda s, a, b: seen.get((tuple(s), a, b), 0))
    assert not result.passed and result.where.startswith("case “[1, 4, 64, 64], counters 2⁶⁴"), repr(result)


def test_a_simulation_with_the_books_stream_passes_the_public_check_but_not_the_key():
    """Drawing both latents and counting is what the public check does; the derivation also answers
    for windows the book's stream never draws (its counters stop at 2⁶⁴; Philox's go on to 2¹²⁸)."""
    from labkit.diffusion.normal import PhiloxNormalStream

    def simulated(shape, a, b):
        def draw(counter):
            return PhiloxNormalStream(314159, counter).normals(math.prod(shape)).values

        return np.intersect1d(draw(a), draw(b)).size

    result = _fits_the_public_cases("shared_latent_numbers", simulated)
    assert not result.passed and "past 2**64" in result.message, repr(result)


def test_a_scale_read_at_one_late_entry_fails_the_hidden_cases():
    def at_entry_20(batch, guided):
        u, c, g = (np.ravel(x).astype(np.float64) for x in (batch[0], batch[1], guided[0]))
        s = (g[20] - u[20]) / (c[20] - u[20])
        return s, s - 1

    result = _fits_the_public_cases("recover_guidance_scale", at_entry_20)
    assert not result.passed, repr(result)


def test_a_v_step_through_ddim_step_patched_at_exactly_zero_fails_the_cosine_schedule():
    """Patched for the ᾱ = 0 it was shown; the cosine schedule's last ᾱ is 4e-33, not 0."""

    def patched(z_t, v, t, prev_t, alpha_bars):
        a, a_prev = alpha_bars[t], 1.0 if prev_t is None else alpha_bars[prev_t]
        if a == 0.0:
            x0, eps = -np.asarray(v, dtype=np.float64), np.asarray(z_t, dtype=np.float64)
            return (np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps).astype(z_t.dtype), x0.astype(z_t.dtype)
        return ddim_step(z_t, np.sqrt(1 - a) * z_t + np.sqrt(a) * v, a, a_prev)

    result = _fits_the_public_cases("ddim_v_update", patched)
    assert not result.passed and "raised ValueError" in result.message, repr(result)
