"""Trace two's public checks (pages 04–06), as a class copy sees them (the key set aside): each typical
wrong answer is caught at its place with the reader's own value. No right answer lives here (the
worked solutions and the right answers in every form are the key's tests, answer_key/tests/)."""

import math

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import without_key
from labkit.diffusion import ddim_step

KIT_ANSWER = {"test_counter_offset_at_another_event_fails"}


@pytest.fixture(autouse=True)
def class_copy(request):
    """Every test here sees the exercises without the teacher's key (those in ``KIT_ANSWER`` as the kit
    attaches them: ``without_key`` also sets aside a fault prediction's answer, which the kit itself
    attaches from the fault catalogue and a class copy keeps)."""
    if request.function.__name__ in KIT_ANSWER:
        yield
        return
    with without_key():
        yield


def _failed_at(result, where: str):
    assert not result.passed and result.status == "failed", repr(result)
    assert (result.where or "").startswith(where), repr(result)
    return result


# -- counter_offset_first_event (predict) -------------------------------------------------------------


@pytest.mark.parametrize("answer", ["latent.initialized", "z_999", "d1"])
def test_counter_offset_answered_with_something_else_than_an_event_id_is_told_to_give_one(answer):
    result = _failed_at(check.counter_offset_first_event(answer), "your value")
    assert result.got == answer and "event ID" in result.message


@pytest.mark.parametrize("answer", ["d00", "d02", "D02"])
def test_counter_offset_at_another_event_fails(answer):
    result = check.counter_offset_first_event(answer)
    assert not result.passed and result.status == "failed" and result.got == answer, repr(result)


# -- shared_latent_numbers (derive) -------------------------------------------------------------------


def _blocks(shape):
    return math.prod(shape) // 4


@pytest.mark.parametrize(
    ("wrong", "where", "got"),
    [
        # counts shared blocks, not numbers
        (lambda s, a, b: max(0, _blocks(s) - abs(a - b)), "case “shape [1, 4, 64, 64], counters 0 and 1000”", 3096),
        # counts the offset in numbers, not blocks
        (lambda s, a, b: max(0, math.prod(s) - abs(a - b)), "case “shape [1, 4, 64, 64], counters 0 and 4096”", 12288),
        # windows that do not touch give a negative count
        (lambda s, a, b: 4 * (_blocks(s) - abs(a - b)), "case “shape [1, 4, 8, 8], counters 90 and 0”", -104),
        # the offset without its sign: right only when b ≥ a
        (lambda s, a, b: 4 * max(0, _blocks(s) - (b - a)), "case “shape [1, 4, 64, 64], counters 1000 and 0”", 20384),
        # the shape's batch left out
        (lambda s, a, b: 4 * max(0, math.prod(s[1:]) // 4 - abs(a - b)), "case “shape [2, 4, 6, 10]", 0),
    ],
)
def test_shared_latent_numbers_wrong_counts_are_caught_at_their_case(wrong, where, got):
    result = _failed_at(check.shared_latent_numbers(wrong), where)
    assert result.got == got


def test_shared_latent_numbers_that_returns_a_word_is_refused():
    result = check.shared_latent_numbers(lambda s, a, b: "none")
    assert not result.passed and "must hold numbers" in result.message


# -- cfg_scale_one (predict) --------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["unconditional", "negative", "ε_neg", "the unconditional prediction"])
def test_cfg_scale_one_naming_the_other_branch_fails(answer):
    result = check.cfg_scale_one(answer)
    assert not result.passed and result.status == "failed" and result.got == answer, repr(result)


@pytest.mark.parametrize("answer", ["both", "neither", "5"])
def test_cfg_scale_one_naming_no_branch_is_told_to_name_one(answer):
    result = _failed_at(check.cfg_scale_one(answer), "your value")
    assert result.got == answer and "one of the two" in result.message


# -- recover_guidance_scale (derive) ------------------------------------------------------------------


def _ratio_at(index):
    def ratio(batch, guided):
        u, c, g = (np.ravel(x) for x in (batch[0], batch[1], guided[0]))
        s = (g[index] - u[index]) / (c[index] - u[index])
        return s, s - 1

    return ratio


def test_recover_guidance_scale_from_one_entry_breaks_where_the_rows_agree():
    result = _failed_at(
        check.recover_guidance_scale(_ratio_at(0)), "case “s = 7.5, rows that agree on their first 16 entries”, s"
    )
    assert np.isnan(result.got)


def test_recover_guidance_scale_as_a_mean_of_ratios_breaks_where_the_rows_agree():
    def mean_ratio(batch, guided):
        s = float(np.mean((guided[0] - batch[0]) / (batch[1] - batch[0])))
        return s, s - 1

    result = _failed_at(check.recover_guidance_scale(mean_ratio), "case “s = 7.5, rows that agree")
    assert np.isnan(result.got)


def test_recover_guidance_scale_with_the_conventions_mixed_up_fails_at_w():
    def w_the_other_way(batch, guided):
        s = _ratio_at(20)(batch, guided)[0]
        return s, s + 1

    result = _failed_at(check.recover_guidance_scale(w_the_other_way), "case “s = 5, the trace's scale”, w")
    assert result.got == pytest.approx(6.0)


def test_recover_guidance_scale_that_reads_the_rows_swapped_fails_at_s():
    def swapped(batch, guided):
        return _ratio_at(20)(batch[::-1], guided)

    result = _failed_at(check.recover_guidance_scale(swapped), "case “s = 5, the trace's scale”, s")
    assert result.got == pytest.approx(-4.0)


def test_recover_guidance_scale_returning_s_alone_is_told_to_return_the_pair():
    result = check.recover_guidance_scale(lambda batch, guided: _ratio_at(20)(batch, guided)[0])
    assert not result.passed and "return a tuple (s, w)" in result.message


# -- ddim_v_update (extend) ---------------------------------------------------------------------------


def _v_step(mistake=None):
    """A v-prediction DDIM step with one classic mistake injected."""

    def ddim_v_update(z_t, v, t, prev_t, alpha_bars):
        a_t = alpha_bars[t]
        a_prev = {"final is ᾱ₀": alpha_bars[0]}.get(mistake, 1.0) if prev_t is None else alpha_bars[prev_t]
        z, vel = z_t.astype(np.float64), v.astype(np.float64)
        a, b = np.sqrt(a_t), np.sqrt(1 - a_t)
        x0 = a * z + b * vel if mistake == "sign" else a * z - b * vel
        eps = b * z + a * vel
        noise = vel if mistake == "re-mix v" else eps
        z_prev = np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * noise
        if mistake == "float64":
            return z_prev, x0
        if mistake == "order":
            return x0.astype(z_t.dtype), z_prev.astype(z_t.dtype)
        return z_prev.astype(z_t.dtype), x0.astype(z_t.dtype)

    return ddim_v_update


FIRST = "case “§7.8 table, t = 2 → 1”"


@pytest.mark.parametrize(
    ("mistake", "where"),
    [
        ("sign", f"{FIRST}, x0_hat[0]"),
        ("re-mix v", f"{FIRST}, z_prev[0]"),
        ("order", f"{FIRST}, x0_hat[0]"),
        ("final is ᾱ₀", "case “training table, t = 249 → end (prev_t None)”, z_prev"),
    ],
)
def test_ddim_v_update_mistakes_are_caught_at_their_case_and_output(mistake, where):
    _failed_at(check.ddim_v_update(_v_step(mistake)), where)


def test_ddim_v_update_that_reads_v_as_epsilon_is_the_old_step_and_fails_first():
    def as_epsilon(z_t, v, t, prev_t, alpha_bars):
        return ddim_step(z_t, v, alpha_bars[t], 1.0 if prev_t is None else alpha_bars[prev_t])

    result = _failed_at(check.ddim_v_update(as_epsilon), f"{FIRST}, x0_hat[0]")
    assert isinstance(result.got, float)


def test_ddim_v_update_through_ddim_step_cannot_take_the_zero_terminal_snr_step():
    def through_epsilon(z_t, v, t, prev_t, alpha_bars):
        a = alpha_bars[t]
        epsilon = np.sqrt(1 - a) * z_t + np.sqrt(a) * v
        return ddim_step(z_t, epsilon, a, 1.0 if prev_t is None else alpha_bars[prev_t])

    result = check.ddim_v_update(through_epsilon)
    assert not result.passed and "raised ValueError" in result.message and "alpha_bar_t" in result.message


def test_ddim_v_update_that_indexes_the_table_with_none_is_named():
    def indexes_none(z_t, v, t, prev_t, alpha_bars):
        a, a_prev = alpha_bars[t], alpha_bars[prev_t]
        x0, eps = np.sqrt(a) * z_t - np.sqrt(1 - a) * v, np.sqrt(1 - a) * z_t + np.sqrt(a) * v
        return np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps, x0

    result = check.ddim_v_update(indexes_none)
    assert not result.passed and "raised" in result.message, repr(result)
    assert "t = 249 → end (prev_t None)" in result.message and "ᾱ_prev = 1.0" in result.message


def test_ddim_v_update_in_float64_passes_the_numbers_and_is_told_about_the_dtype():
    result = _failed_at(check.ddim_v_update(_v_step("float64")), "float32 latent, z_prev.dtype")
    assert result.got == "float64"


def test_ddim_v_update_off_in_the_loop_by_one_number_is_caught_at_its_event():
    def nudged(z_t, v, t, prev_t, alpha_bars):
        z_prev, x0 = _v_step()(z_t, v, t, prev_t, alpha_bars)
        if z_t.shape == (1, 4, 64, 64) and t == 749:
            x0 = x0.copy()
            x0[0, 1, 2, 3] += 2e-3
        return z_prev, x0

    result = _failed_at(check.ddim_v_update(nudged), "d03 denoise.updated (step 2, t = 749), x0_hat[0, 1, 2, 3]")
    assert result.rule == "every number within 1e-4"


def test_ddim_v_update_is_not_graded_without_the_key_beyond_its_properties():
    """Without the key a function exercise is judged by its properties alone: a stub is not attempted."""

    def stub(z_t, v, t, prev_t, alpha_bars):
        raise NotImplementedError

    assert check.ddim_v_update(stub).status == "not attempted"
