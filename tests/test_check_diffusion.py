"""Trace two's exercises catch typical wrong answers, each at the event (or sub-fixture step)
with the rule that breaks.  (Every solution passing, and stubs/crashes/wrong
signatures, are covered for all exercises by tests/test_check.py.)"""

import numpy as np
import pytest

import labkit.check as check

# -- ddim_update ---------------------------------------------------------------------------------------


def _ddim(mistake=None):
    """A DDIM step with one of the classic mistakes injectable."""

    def ddim_update(z_t, epsilon, t, prev_t, alpha_bars):
        a_t = alpha_bars[t]
        if prev_t is not None:
            a_prev = alpha_bars[prev_t]
        else:
            a_prev = {"alpha_bars[0]": alpha_bars[0], "alpha_bars[-1]": alpha_bars[-1]}.get(mistake, 1.0)
        z, eps = z_t.astype(np.float64), epsilon.astype(np.float64)
        if mistake == "alpha for sqrt":
            x0 = (z - (1 - a_t) * eps) / a_t
        else:
            x0 = (z - np.sqrt(1 - a_t) * eps) / np.sqrt(a_t)
        signal = eps if mistake == "epsilon for x0" else x0
        z_prev = np.sqrt(a_prev) * signal + np.sqrt(1 - a_prev) * eps
        if mistake == "float64":
            return z_prev, x0
        if mistake == "order":
            return x0.astype(z_t.dtype), z_prev.astype(z_t.dtype)
        return z_prev.astype(z_t.dtype), x0.astype(z_t.dtype)

    return ddim_update


def test_the_mistake_free_ddim_helper_passes():
    result = check.ddim_update(_ddim())
    assert result.passed, repr(result)


def test_ddim_with_alpha_bar_for_its_square_root_fails_the_subfixture_first():
    result = check.ddim_update(_ddim("alpha for sqrt"))
    assert not result.passed
    assert result.where == "case “§7.8 sub-fixture, step t = 2 → 1”, x0_hat[0]", result.where
    assert result.got == pytest.approx(3.4) and result.expected == pytest.approx(1.65359, abs=1e-6)
    assert result.hint


def test_ddim_using_epsilon_instead_of_x0_is_named_at_z_prev():
    result = check.ddim_update(_ddim("epsilon for x0"))
    assert not result.passed
    assert result.where == "case “§7.8 sub-fixture, step t = 2 → 1”, z_prev[0]", result.where
    assert result.expected == pytest.approx(1.442872, abs=1e-6)
    assert result.hint


@pytest.mark.parametrize(("mistake", "value"), [("alpha_bars[0]", "0.99915"), ("alpha_bars[-1]", "0.0046601")])
def test_ddim_with_a_table_entry_as_the_final_alpha_bar_is_caught_at_the_last_step(mistake, value):
    """The sub-fixture's last step has a real ᾱ₀ = 1 and passes; the trace's last step has none."""
    result = check.ddim_update(_ddim(mistake))
    assert not result.passed and result.rule == "tensors"
    assert result.where.startswith("d05 denoise.updated (step 4), field tensors.z_0"), result.where
    assert result.hint and result.hint, result.hint


def test_ddim_that_indexes_the_table_with_none_is_told_about_the_last_step():
    def indexes_none(z_t, epsilon, t, prev_t, alpha_bars):
        a_t, a_prev = alpha_bars[t], alpha_bars[prev_t]
        x0 = (z_t - np.sqrt(1 - a_t) * epsilon) / np.sqrt(a_t)
        return (np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * epsilon).astype(z_t.dtype), x0.astype(z_t.dtype)

    result = check.ddim_update(indexes_none)
    assert not result.passed and "raised" in result.message
    assert "at t = 249, the last step, prev_t is None" in result.message and "ᾱ_prev = 1.0" in result.message


def test_ddim_returning_the_pair_in_the_wrong_order_is_named():
    result = check.ddim_update(_ddim("order"))
    assert not result.passed and result.where.startswith("case “§7.8 sub-fixture, step t = 2 → 1”"), result.where
    assert result.hint


def test_ddim_in_float64_passes_the_subfixture_and_is_caught_as_a_dtype_divergence_at_d02():
    result = check.ddim_update(_ddim("float64"))
    assert not result.passed
    assert result.where.startswith("d02 denoise.updated (step 1), field tensors.x0_hat.dtype"), result.where
    assert (result.got, result.expected) == ("float64", "float32")


def test_ddim_in_float32_arithmetic_is_accepted_at_the_latent_level():
    """Rounding differently in the last bits is not a mistake: the checker compares latents under
    a tolerance and never the pixels or PNG bytes, which such a rounding would change."""

    def in_float32(z_t, epsilon, t, prev_t, alpha_bars):
        a_t = np.float32(alpha_bars[t])
        a_prev = np.float32(1.0 if prev_t is None else alpha_bars[prev_t])
        x0 = (z_t - np.sqrt(1 - a_t) * epsilon) / np.sqrt(a_t)
        return np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * epsilon, x0

    result = check.ddim_update(in_float32)
    assert result.passed, repr(result)


@pytest.mark.parametrize(
    ("exercise", "wrong"),
    [
        ("ddim_update", _ddim("alpha for sqrt")),
        ("ddim_update", _ddim("alpha_bars[0]")),
    ],
)
def test_hints_explain_the_idea_without_showing_code(exercise, wrong):
    result = getattr(check, exercise)(wrong)
    assert not result.passed and result.hint, repr(result)
    for code in ("np.", "def ", "return ", "[0:1]", "import "):
        assert code not in result.hint, f"{exercise}: the hint shows code ({code!r}): {result.hint}"


def _nudged(array, index=(0, 1, 2, 3), by=2e-3):
    out = np.array(array, copy=True)
    out[index] += by
    return out


def test_ddim_off_at_one_number_of_x0_passes_the_trace_summary_but_not_the_whole_array():
    def nudged(z_t, epsilon, t, prev_t, alpha_bars):
        z_prev, x0 = _ddim()(z_t, epsilon, t, prev_t, alpha_bars)
        return z_prev, (_nudged(x0) if z_t.ndim == 4 and t == 749 else x0)

    result = check.ddim_update(nudged)
    assert not result.passed and result.rule == "every number within 1e-4"
    assert result.where.startswith("d03 denoise.updated (step 2, t = 749), x0_hat[0, 1, 2, 3]"), result.where
