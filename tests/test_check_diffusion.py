"""Trace two's exercises catch typical wrong answers, each at the event (or sub-fixture step)
and with the hint a reader needs.  (Every solution passing, and stubs/crashes/wrong
signatures, are covered for all exercises by tests/test_check.py.)"""

import numpy as np
import pytest

import labkit.check as check

# -- words_to_normals ------------------------------------------------------------------------------


def _normals(shift=0.5, scale=2.0**32, sine_first=False, pairs=((0, 1), (2, 3)), grouped=False):
    """A words → normals transform with the usual mistakes injectable."""

    def words_to_normals(words):
        u = (np.asarray(words, dtype=np.float64) + shift) / scale
        out = []
        for first, second in pairs:
            radius, angle = np.sqrt(-2.0 * np.log(u[:, first])), 2.0 * np.pi * u[:, second]
            cos, sin = radius * np.cos(angle), radius * np.sin(angle)
            out += [sin, cos] if sine_first else [cos, sin]
        return np.stack(out, axis=0 if grouped else 1).reshape(-1)

    return words_to_normals


def test_the_mistake_free_normals_helper_passes():
    """Guards the wrong-answer tests below: with no mistake injected, the helper is right."""
    result = check.words_to_normals(_normals())
    assert result.passed, repr(result)


def test_normals_with_sine_first_are_caught_at_d01():
    result = check.words_to_normals(_normals(sine_first=True))
    assert not result.passed and result.rule == "tensors"
    assert result.where.startswith("d01 latent.initialized (step 0), field tensors.z_999"), result.where
    assert "cosine normal first" in result.hint, result.hint


def test_normals_grouped_by_position_instead_of_block_by_block_are_named():
    result = check.words_to_normals(_normals(grouped=True))
    assert not result.passed
    assert result.where.startswith("d01 latent.initialized (step 0), field tensors.z_999.values[1]"), result.where
    assert "block by block" in result.hint, result.hint


def test_normals_with_pairs_across_the_block_are_named():
    result = check.words_to_normals(_normals(pairs=((0, 2), (1, 3))))
    assert not result.passed and result.where.startswith("d01 "), result.where
    assert "(x₀, x₁) and (x₂, x₃)" in result.hint, result.hint


@pytest.mark.parametrize("scale", [2.0**32, 2.0**32 - 1])
def test_uniform_without_the_half_step_reproduces_the_run_but_is_caught_at_word_0(scale):
    """u = x / 2³² never meets word 0 in the chapter's 16384 draws; the extreme words expose it."""
    result = check.words_to_normals(_normals(shift=0.0, scale=scale))
    assert not result.passed
    assert result.where == "extreme words, normal 0 (block 0, from the word pair 0x00000000, 0x00000000)", result.where
    assert result.got == np.inf and result.expected == pytest.approx(np.sqrt(66 * np.log(2)))
    assert "ln u is −∞ at u = 0" in result.hint and "never 0 and never 1" in result.hint


def test_uniform_shifted_by_a_whole_step_is_caught_at_the_extreme_words():
    """u = (x + 1) / 2³² stays finite (word 2³²−1 → u = 1, r = 0) and is within tolerance on the run."""
    result = check.words_to_normals(_normals(shift=1.0))
    assert not result.passed
    assert result.where == "extreme words, normal 0 (block 0, from the word pair 0x00000000, 0x00000000)", result.where
    assert result.got == pytest.approx(np.sqrt(64 * np.log(2)))  # r for u = 2⁻³²
    assert result.expected == pytest.approx(np.sqrt(66 * np.log(2)))  # r for u = 2⁻³³, the cell's centre
    assert "cell's centre" in result.hint and "word 2³²−1 is not 1" in result.hint


def test_normals_of_the_wrong_count_are_refused_with_the_shape():
    result = check.words_to_normals(lambda words: _normals()(words)[::2])
    assert not result.passed
    assert "4096 blocks of 4 words must give 16384 normals" in result.message and "[8192]" in result.message


# -- cfg_combine -------------------------------------------------------------------------------------


def test_cfg_with_the_rows_swapped_is_caught_at_d02_and_points_at_the_batch_order():
    def swapped(epsilon_batch, guidance_scale):
        eps_pos, eps_neg = epsilon_batch[0:1], epsilon_batch[1:2]  # row 0 read as positive
        return eps_neg + guidance_scale * (eps_pos - eps_neg)

    result = check.cfg_combine(swapped)
    assert not result.passed and result.rule == "tensors"
    assert result.where.startswith("d02 denoise.updated (step 1), field tensors.epsilon_guided"), result.where
    assert "golden trace" in result.where
    assert "cfg_batch_order is ['negative', 'positive']" in result.hint and "row 0 is ε_neg" in result.hint


def test_cfg_with_a_hard_coded_scale_passes_the_chapter_but_fails_guidance_2():
    result = check.cfg_combine(lambda b, w: b[0:1] + 5.0 * (b[1:2] - b[0:1]))
    assert not result.passed
    assert result.where.startswith("d02 denoise.updated (step 1)") and "guidance_scale = 2.0" in result.where, (
        result.where
    )
    assert "use the argument, never a constant" in result.hint


def test_cfg_starting_from_the_positive_branch_is_named():
    result = check.cfg_combine(lambda b, w: (1 + w) * b[1:2] - w * b[0:1])
    assert not result.passed and result.where.startswith("d02 denoise.updated (step 1)"), result.where
    assert "starts from ε_pos" in result.hint and "w = 1 gives exactly ε_pos" in result.hint


def test_cfg_returning_the_positive_branch_alone_is_named():
    result = check.cfg_combine(lambda b, w: b[1:2].copy())
    assert not result.passed and result.where.startswith("d02 "), result.where
    assert "positive branch alone, which is guidance scale 1" in result.hint


def test_cfg_in_float64_is_caught_as_a_dtype_divergence():
    result = check.cfg_combine(lambda b, w: (b[0:1] + w * (b[1:2] - b[0:1])).astype(np.float64))
    assert not result.passed and result.where.startswith("d02 "), result.where
    assert (result.got, result.expected) == ("float64", "float32") and "float32" in result.hint


def test_cfg_dropping_the_batch_axis_is_refused_with_both_shapes():
    result = check.cfg_combine(lambda b, w: b[0] + w * (b[1] - b[0]))
    assert not result.passed
    assert "[1, 4, 64, 64]" in result.message and "got [4, 64, 64]" in result.message


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
    assert result.where == "§7.8 sub-fixture, step t = 2 → 1: x0_hat[0]", result.where
    assert result.got == pytest.approx(3.4) and result.expected == pytest.approx(1.65359, abs=1e-6)
    assert "you used ᾱ_t where √ᾱ_t belongs" in result.hint


def test_ddim_using_epsilon_instead_of_x0_is_named_at_z_prev():
    result = check.ddim_update(_ddim("epsilon for x0"))
    assert not result.passed
    assert result.where == "§7.8 sub-fixture, step t = 2 → 1: z_prev[0]", result.where
    assert result.expected == pytest.approx(1.442872, abs=1e-6)
    assert "you used ε where x̂₀ belongs" in result.hint


@pytest.mark.parametrize(("mistake", "value"), [("alpha_bars[0]", "0.99915"), ("alpha_bars[-1]", "0.0046601")])
def test_ddim_with_a_table_entry_as_the_final_alpha_bar_is_caught_at_the_last_step(mistake, value):
    """The sub-fixture's last step has a real ᾱ₀ = 1 and passes; the trace's last step has none."""
    result = check.ddim_update(_ddim(mistake))
    assert not result.passed and result.rule == "tensors"
    assert result.where.startswith("d05 denoise.updated (step 4), field tensors.z_0"), result.where
    assert f"ᾱ_prev = {mistake} = {value}" in result.hint and "ᾱ_prev = 1.0" in result.hint, result.hint


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
    assert not result.passed and result.where.startswith("§7.8 sub-fixture, step t = 2 → 1"), result.where
    assert "the step returns (z_prev, x̂₀), in that order" in result.hint


def test_ddim_in_float64_passes_the_subfixture_and_is_caught_as_a_dtype_divergence_at_d02():
    result = check.ddim_update(_ddim("float64"))
    assert not result.passed
    assert result.where.startswith("d02 denoise.updated (step 1), field tensors.x0_hat.dtype"), result.where
    assert (result.got, result.expected) == ("float64", "float32")


def test_normals_computed_in_float32_are_caught_on_the_whole_latent_with_a_precision_hint():
    """The d01 summary agrees to 1e-3; the whole latent does not agree to 1e-6."""

    def in_float32(words):
        u = (words.astype(np.float32) + np.float32(0.5)) * np.float32(2.0**-32)
        radius, angle = np.sqrt(-2 * np.log(u[:, 0::2])), np.float32(2 * np.pi) * u[:, 1::2]
        return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1).reshape(-1)

    result = check.words_to_normals(in_float32)
    assert not result.passed and result.rule == "every latent number within 1e-6"
    assert result.where.startswith("d01 latent.initialized, z_999["), result.where
    assert abs(result.got - result.expected) < 1e-3
    assert "computes in float64" in result.hint and "were float32" in result.hint


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
        ("words_to_normals", _normals(sine_first=True)),
        ("words_to_normals", _normals(shift=0.0)),
        ("cfg_combine", lambda b, w: b[1:2] + w * (b[0:1] - b[1:2])),
        ("cfg_combine", lambda b, w: b[0:1] + 0.5 * w * (b[1:2] - b[0:1])),  # matches no named mistake
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


def test_cfg_off_at_one_number_passes_the_trace_summary_but_not_the_whole_array():
    """One ε̂ value off by 2e-3 leaves the rounded d02 summary as it was; the array check finds it."""
    result = check.cfg_combine(lambda b, w: _nudged(b[0:1] + w * (b[1:2] - b[0:1])))
    assert not result.passed and result.rule == "every number within 1e-05"
    assert result.where.startswith("d02 denoise.updated (step 1, t = 999), epsilon_guided[0, 1, 2, 3]"), result.where
    assert result.got - result.expected == pytest.approx(2e-3, abs=1e-6)


def test_ddim_off_at_one_number_of_x0_passes_the_trace_summary_but_not_the_whole_array():
    def nudged(z_t, epsilon, t, prev_t, alpha_bars):
        z_prev, x0 = _ddim()(z_t, epsilon, t, prev_t, alpha_bars)
        return z_prev, (_nudged(x0) if z_t.ndim == 4 and t == 749 else x0)

    result = check.ddim_update(nudged)
    assert not result.passed and result.rule == "every number within 1e-4"
    assert result.where.startswith("d03 denoise.updated (step 2, t = 749), x0_hat[0, 1, 2, 3]"), result.where
