"""The public checks of labs 07–13 as a class copy runs them (the key set aside): a typical wrong answer is
caught by a property, at its place, with the reader's own value. No right answer lives here (the key's
tests run those: answer_key/tests/test_labs_ii.py)."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import reset_attempts, without_key
from labkit.labs import kl, speculative
from labkit.labs import report as reports
from labkit.nn.attention import softmax


@pytest.fixture(autouse=True)
def class_copy():
    reset_attempts()
    with without_key():
        yield


def _caught(result, where: str, got=None) -> None:
    assert not result.passed and result.status == "failed", repr(result)
    assert (result.where or "").startswith(where), f"where {result.where!r} does not start with {where!r}"
    if got is not None:
        assert result.got == pytest.approx(got), repr(result)


# --- 07 ---------------------------------------------------------------------------------------------------


def _leave_one_out(r, valid):
    """The leave-one-out advantage of the valid answers, NaN kept out of the sums (no zeroing)."""
    r = np.where(valid, r, 0.0)
    n = valid.sum(axis=-1, keepdims=True)
    return np.where(valid, r - (r.sum(axis=-1, keepdims=True) - r) / np.maximum(n - 1, 1), 0.0)


def test_rloo_that_keeps_the_answer_in_its_baseline_is_caught_where_a_reward_moves():
    def centred(r, valid):
        return r - r.mean(axis=-1, keepdims=True)

    _caught(check.rloo_advantages(centred), "case “the lab's three groups, every answer valid”", 0.375)


def test_rloo_that_divides_by_k_instead_of_k_minus_1_does_not_sum_to_zero():
    result = check.rloo_advantages(lambda r, valid: r - (r.sum(axis=-1, keepdims=True) - r) / r.shape[-1])
    _caught(result, "case “the lab's three groups, every answer valid”, group 0", 0.5)


def test_rloo_that_ignores_the_mask_is_caught_on_the_cut_off_answers():
    def unmasked(r, valid):
        return r - (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)

    _caught(
        check.rloo_advantages(unmasked), "case “one success in eight, the last two answers cut off”, advantage [0, 6]"
    )


def test_rloo_that_lets_a_nan_reward_through_is_told_so():
    def nan_through(r, valid):
        n = valid.sum(axis=-1, keepdims=True)
        masked = r * valid  # NaN · 0 is NaN
        return np.where(valid, masked - (masked.sum(axis=-1, keepdims=True) - masked) / np.maximum(n - 1, 1), 0.0)

    result = check.rloo_advantages(nan_through)
    _caught(result, "case “two groups of five, the invalid rewards NaN”, advantage [0, 0]")
    assert "NaN" in result.message


def test_rloo_that_gives_a_lone_valid_answer_an_advantage_is_caught():
    _caught(
        check.rloo_advantages(_leave_one_out),
        "case “a group with one valid answer beside a full one”, advantage [0, 0]",
        3.0,
    )


def test_informative_probability_that_forgets_the_all_wrong_group_is_caught_at_p_0():
    _caught(check.informative_group_probability(lambda p, k: 1 - p**k), "p = 0.0, k = 5", 1.0)


def test_informative_probability_off_the_sampled_groups_is_caught():
    wrong = lambda p, k: (1 - p**k - (1 - p) ** k) ** 2  # noqa: E731  right at the edges only
    _caught(check.informative_group_probability(wrong), "p = 0.3, k = 4", (1 - 0.3**4 - 0.7**4) ** 2)


# --- 08 ---------------------------------------------------------------------------------------------------


def test_gaussian_kl_without_the_half_is_caught_at_equal_gaussians():
    wrong = lambda mp, sp, mq, sq: np.log(sq / sp) + (sp**2 + (mp - mq) ** 2) / (2 * sq**2)  # noqa: E731
    _caught(check.gaussian_kl(wrong), "μ_p = 0.0, σ_p = 1.0, μ_q = 0.0, σ_q = 1.0", 0.5)


def test_gaussian_kl_in_the_other_direction_is_caught():
    reverse = lambda mp, sp, mq, sq: np.log(sp / sq) + (sq**2 + (mp - mq) ** 2) / (2 * sp**2) - 0.5  # noqa: E731
    _caught(check.gaussian_kl(reverse), "μ_p = 0.3, σ_p = 0.7")


def test_kl_of_softmaxed_probabilities_is_caught_where_one_underflows():
    result = check.kl_from_logits(lambda z_p, z_q: kl.kl_divergence(softmax(z_p), softmax(z_q)))
    _caught(result, "case “a token z_q puts 800 below the other”", float("inf"))


def test_kl_from_logits_without_the_normalisers_is_caught():
    wrong = lambda z_p, z_q: float(np.sum(softmax(z_p) * (z_p - z_q)))  # noqa: E731
    _caught(check.kl_from_logits(wrong), "case “seeded logits [8]”")


def test_kl_from_logits_without_the_max_shift_overflows_in_the_thousands():
    def unshifted(z_p, z_q):
        log_p, log_q = (z - np.log(np.sum(np.exp(z))) for z in (z_p, z_q))
        return float(np.sum(np.exp(log_p) * (log_p - log_q)))

    _caught(check.kl_from_logits(unshifted), "case “logits in the thousands”")


# --- 09 ---------------------------------------------------------------------------------------------------


def _sampler(refill):
    """A verifier that keeps a draft with min(1, p/q) and draws a replacement from ``refill(p, q)``."""

    def verify(p, q, x, u, v):
        keep = speculative.speculative_mass(p, q).accept_probability
        cumulative = np.cumsum(refill(p, q))
        replacement = np.minimum(np.searchsorted(cumulative, v, side="right"), p.size - 1)
        return np.where(u < keep[x], x, replacement)

    return verify


def test_the_wrong_fallback_is_caught_by_the_output_law():
    result = check.verify_draft(_sampler(lambda p, q: p))
    _caught(result, "case “the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, P(output = 0)")
    assert result.got == pytest.approx(0.52, abs=0.01)


def test_a_verifier_that_always_draws_from_p_keeps_the_law_but_not_the_draft():
    def fresh_draw(p, q, x, u, v):
        return np.minimum(np.searchsorted(np.cumsum(p), v, side="right"), p.size - 1)

    result = check.verify_draft(fresh_draw)
    _caught(result, "case “the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”", 0.38)
    assert result.message == "the draft is kept less often than it could be"


def test_a_verifier_that_returns_floats_is_told_to_return_token_ids():
    result = check.verify_draft(lambda p, q, x, u, v: x.astype(float))
    assert not result.passed and "token IDs" in result.message, repr(result)


def test_second_draft_judged_against_the_target_again_breaks_the_law():
    def against_p(p, q):
        first = speculative.speculative_mass(p, q)
        return first.accept_probability, speculative.speculative_mass(first.residual, q).residual

    _caught(check.second_draft(against_p), "case “the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, P(output")


def test_a_second_draft_never_kept_keeps_the_law_but_is_caught_turning_tokens_away():
    never = lambda p, q: (np.zeros_like(p), speculative.speculative_mass(p, q).residual)  # noqa: E731
    result = check.second_draft(never)
    _caught(result, "case “the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, accept[0]", 0.0)


def test_tokens_per_call_at_the_mean_rate_is_caught_by_the_simulated_sampler():
    def mean_rate(alphas):
        rate = float(np.mean(alphas)) if len(alphas) else 0.0
        return float(speculative.expected_tokens_per_target_call(rate, len(alphas)))

    _caught(check.tokens_per_target_call(mean_rate), "alphas = [0.9, 0.7, 0.5, 0.3]", 2.3056)


def test_tokens_per_call_that_adds_the_rates_is_caught_at_an_exact_case():
    _caught(check.tokens_per_target_call(lambda alphas: 1 + sum(alphas)), "alphas = [0.7, 0.7, 0.7, 0.7, 0.7]", 4.5)


def test_break_even_cost_not_shared_by_the_k_drafts_is_caught():
    wrong = lambda alpha, k: float(speculative.expected_tokens_per_target_call(alpha, k)) - 1  # noqa: E731
    _caught(check.break_even_draft_cost(wrong), "alpha = 0.8, k = 4", 2.3616)


# --- 10 ---------------------------------------------------------------------------------------------------


def _weight_and_token_bytes(budget):
    per_token = 2 * budget.n_layers * budget.n_kv_heads * budget.head_dim * budget.kv_bytes_per_element
    return budget.n_params * budget.bytes_per_param, per_token


def test_a_bound_in_seconds_is_caught_on_one_request():
    def seconds(budget, contexts):
        weights, per_token = _weight_and_token_bytes(budget)
        return (weights + per_token * sum(contexts)) / budget.bandwidth_bytes_per_second

    _caught(check.decode_step_lower_bound_ms(seconds), "the source's 7B layout, [100]")


def test_a_bound_that_reads_the_weights_per_request_is_caught_on_the_batch():
    def per_request(budget, contexts):
        weights, per_token = _weight_and_token_bytes(budget)
        return sum(weights + per_token * c for c in contexts) / budget.bandwidth_bytes_per_second * 1000

    result = check.decode_step_lower_bound_ms(per_request)
    _caught(result, "the source's 7B layout, contexts [8192, 1024, 100, 8192]")
    assert result.message == "the batch does not read the weights once and each cache once"


def test_a_bound_that_gives_every_request_the_longest_context_is_caught():
    def longest(budget, contexts):
        weights, per_token = _weight_and_token_bytes(budget)
        return (weights + per_token * len(contexts) * max(contexts)) / budget.bandwidth_bytes_per_second * 1000

    _caught(check.decode_step_lower_bound_ms(longest), "the source's 7B layout, contexts")


def test_the_layout_has_no_context_and_no_step():
    result = check.decode_step_lower_bound_ms(lambda budget, contexts: budget.context)
    assert not result.passed and "has no attribute 'context'" in result.message, repr(result)


def test_the_gigabyte_gibibyte_mix_up_misses_the_quantised_bound():
    result = check.quantised_batch8_ms(11.0)  # 7 GB + 8 · 0.5 "GB": 2.6 % short, outside ±2 %
    assert not result.passed and result.status == "failed" and result.got == 11.0, repr(result)


# --- 11 ---------------------------------------------------------------------------------------------------


def test_factors_that_forget_the_ranks_are_caught_on_the_labs_ranks():
    _caught(check.loss_scale_factors(lambda n: n / n.sum()), "case “the lab's ranks: 2 and 6 tokens")


def test_factors_that_forget_each_micro_batchs_own_count_are_caught():
    wrong = lambda n: np.full(n.shape, n.shape[0] / n.sum())  # noqa: E731
    _caught(check.loss_scale_factors(wrong), "case “the lab's ranks: 2 and 6 tokens")


def test_factors_of_the_wrong_shape_get_a_clear_message():
    result = check.loss_scale_factors(lambda n: n.sum(axis=1))
    assert not result.passed and "must have shape" in result.message, repr(result)


# --- 12 ---------------------------------------------------------------------------------------------------

_TOP = ("status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs")


def test_a_report_check_of_top_level_keys_only_misses_a_bad_status():
    def keys_only(report):
        return [f"missing {key}" for key in _TOP if key not in report]

    _caught(check.report_problems(keys_only), "case “a passing report whose status is “ok””", [])


def test_reading_reports_labs_as_a_list_of_names_rejects_a_real_report():
    def labs_as_names(report):  # the page's old wording: "the eight of reports.LABS"
        return [f"unknown lab {key!r}" for key in report.get("labs", {}) if key not in reports.LABS]

    result = check.report_problems(labs_as_names)
    _caught(result, "case “a real report of a passing run”")
    assert result.message == "a well-formed report was rejected" and "unknown lab 'ce_gradient'" in result.got


def test_a_report_check_that_indexes_blindly_is_told_which_damage_crashed_it():
    def blind(report):
        return [] if report["runtime"]["dtype"] == "float64" else ["runtime dtype"]

    result = check.report_problems(blind)
    _caught(result, "case “a passing report without “runtime””")
    assert result.message == "a damaged report crashed your function" and "KeyError" in result.got


def test_a_report_check_returning_a_bool_gets_a_clear_message():
    result = check.report_problems(lambda report: False)
    assert not result.passed and "return a list of strings" in result.message, repr(result)


# --- 13 ---------------------------------------------------------------------------------------------------


def test_least_squares_is_dragged_by_one_slow_run():
    least_squares = lambda t, y: float(np.polyfit(np.log(t), np.log(y), 1)[0])  # noqa: E731
    _caught(check.growth_exponent(least_squares), "case “a T^1.5 curve with one slow run")


def test_the_median_of_raw_slopes_is_caught_on_a_linear_curve():
    def raw(contexts, times):
        t, y = np.asarray(contexts, float), np.asarray(times, float)
        i, j = np.triu_indices(t.size, k=1)
        return float(np.median((y[j] - y[i]) / (t[j] - t[i])))

    _caught(check.growth_exponent(raw), "case “a linear curve", 0.003)


def test_a_fit_with_log2_on_one_axis_only_depends_on_the_unit():
    def mixed(contexts, times):
        t, y = np.log2(np.asarray(contexts, float)), np.log(np.asarray(times, float))
        i, j = np.triu_indices(t.size, k=1)
        return float(np.median((y[j] - y[i]) / (t[j] - t[i])))

    _caught(check.growth_exponent(mixed), "case “a linear curve", np.log(2))


def test_the_median_of_neighbours_slopes_only_depends_on_the_order():
    def neighbours(contexts, times):
        t, y = np.log(np.asarray(contexts, float)), np.log(np.asarray(times, float))
        return float(np.median(np.diff(y) / np.diff(t)))

    _caught(check.growth_exponent(neighbours), "a noisy T^1.5 curve, the same measurements in another order")


# --- without the key -------------------------------------------------------------------------------------

GRADED = (
    "informative_group_probability",
    "rloo_advantages",
    "gaussian_kl",
    "kl_from_logits",
    "verify_draft",
    "second_draft",
    "tokens_per_target_call",
    "break_even_draft_cost",
    "decode_step_lower_bound_ms",
    "loss_scale_factors",
    "report_problems",
    "growth_exponent",
)


@pytest.mark.parametrize("name", GRADED)
def test_a_graded_exercise_has_a_public_check_and_no_answer_in_the_kit(name):
    spec = check.exercises()[name]
    assert spec.graded and spec.properties is not None and spec.kind in ("extend", "derive", "diagnose")
    assert not spec.keyed, f"{name}: a reference, cases or an answer is attached without the key"
    with pytest.raises(LookupError):
        spec.reveal()
