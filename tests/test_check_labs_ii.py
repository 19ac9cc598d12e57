"""Exercises of labs 06–12: typical wrong answers are caught at the expected place with the expected hint.

tests/test_check.py already runs every solution (must pass) and the stub/crash/signature
cases; here each exercise meets one or two deliberately wrong answers.
"""

import math

import numpy as np

import labkit.check as check
from labkit.labs import dpo, kl, speculative, unequal_rank


def _failed(result, where_part: str, hint_part: str) -> None:
    assert not result.passed, f"expected a failure, got {result!r}"
    assert where_part in (result.where or result.message), f"where/message lacks {where_part!r}:\n{result!r}"
    assert hint_part in (result.hint or ""), f"hint lacks {hint_part!r}:\n{result!r}"


def _sigmoid_pull(policy, reference, beta):
    m = beta * ((policy[0] - reference[0]) - (policy[1] - reference[1]))
    return beta / (1.0 + np.exp(m))


# --- 06 dpo_gradient ---------------------------------------------------------------------------


def test_dpo_gradient_with_the_sign_flipped_is_caught_on_the_lab_pair():
    def uphill(policy, reference, beta):
        pull = _sigmoid_pull(policy, reference, beta)
        return np.array([pull, -pull])

    result = check.dpo_gradient(uphill)
    _failed(result, "the lab's pair", "sign is flipped")
    assert result.expected == dpo.dpo_gradient(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS)[0]


def test_dpo_gradient_that_overflows_far_out_on_the_curve_is_told_so():
    def overflowing(policy, reference, beta):
        m = beta * ((policy[0] - reference[0]) - (policy[1] - reference[1]))
        s = np.exp(-m) / (1.0 + np.exp(-m))  # inf / inf at m ≈ −900
        return np.array([-beta * s, beta * s])

    _failed(check.dpo_gradient(overflowing), "m ≈ −900", "overflows")


def test_dpo_gradient_that_ignores_the_reference_is_caught_where_the_reference_is_uneven():
    def no_reference(policy, reference, beta):
        pull = _sigmoid_pull(policy, np.zeros(2), beta)
        return np.array([-pull, pull])

    _failed(check.dpo_gradient(no_reference), "reference that prefers the rejected", "reference log-probabilities")


# --- 07 grpo_advantages ------------------------------------------------------------------------


def test_grpo_with_a_fixed_population_std_is_caught_on_the_sample_case():
    def always_population(rewards, ddof, eps):
        r = np.asarray(rewards)
        return (r - r.mean(axis=1, keepdims=True)) / (r.std(axis=1, keepdims=True) + eps)

    result = check.grpo_advantages(always_population)
    _failed(result, "ddof 1, ε = 1e-8”, advantage[0, 0]", "advantages for ddof 0")
    assert abs(result.expected - (-0.8660253887844389)) <= 1e-15


def test_grpo_without_epsilon_is_caught_on_the_all_correct_group():
    def no_epsilon(rewards, ddof, eps):
        r = np.asarray(rewards)
        return (r - r.mean(axis=1, keepdims=True)) / r.std(axis=1, ddof=ddof, keepdims=True)

    result = check.grpo_advantages(no_epsilon)
    _failed(result, "advantage[1, 0] (group 1 = [1, 1, 1, 1])", "0/0")
    assert math.isnan(result.got) and result.expected == 0.0


def test_grpo_standardised_over_the_whole_batch_is_caught():
    def batch_wide(rewards, ddof, eps):
        r = np.asarray(rewards)
        return (r - r.mean()) / (r.std(ddof=ddof) + eps)

    _failed(check.grpo_advantages(batch_wide), "group 1 = [1, 1, 1, 1]", "inside each group")


# --- 08 kl_divergence --------------------------------------------------------------------------


def test_kl_without_the_support_rule_gives_nan_on_a_zero_in_p():
    def naive(p, q):
        return float(np.sum(p * np.log(p / q)))

    result = check.kl_divergence(naive)
    _failed(result, "a zero in p", "limit is 0")
    assert math.isnan(result.got) and abs(result.expected - kl.kl_divergence([0.9, 0.1, 0.0], [0.5, 0.25, 0.25])) == 0


def test_kl_smoothed_with_a_small_constant_misses_the_infinity():
    def smoothed(p, q):
        p, q = np.asarray(p), np.where(np.asarray(q) == 0, 1e-12, q)  # pad only the zeros of q
        keep = p > 0
        return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))

    result = check.kl_divergence(smoothed)
    _failed(result, "mass where the reference has none", "infinite")
    assert result.expected == math.inf and math.isfinite(result.got)


def test_kl_smoothed_everywhere_is_caught_on_the_lab_pair_as_close_but_not_equal():
    def smoothed_everywhere(p, q):
        p, q = np.asarray(p), np.asarray(q) + 1e-12
        keep = p > 0
        return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))

    _failed(check.kl_divergence(smoothed_everywhere), "the lab's KL(p ‖ q)", "small constant")


def test_kl_in_the_wrong_direction_is_named():
    def reversed_direction(p, q):
        return kl.kl_divergence(q, p)

    _failed(check.kl_divergence(reversed_direction), "the lab's KL(p ‖ q)", "that is KL(q ‖ p)")


# --- 09 speculative_parts ----------------------------------------------------------------------


def test_refilling_from_p_is_recognised_as_the_wrong_fallback():
    def refill_from_target(p, q):
        return speculative.speculative_mass(p, q).accept_probability, np.asarray(p)

    result = check.speculative_parts(refill_from_target)
    _failed(result, "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, residual[0]", "counts that overlap twice")
    assert result.got == 0.6 and result.expected == 1.0


def test_residual_that_divides_by_zero_when_p_equals_q_is_caught():
    def always_normalise(p, q):
        excess = np.maximum(p - q, 0.0)
        with np.errstate(invalid="ignore"):
            return speculative.speculative_mass(p, q).accept_probability, excess / excess.sum()

    _failed(check.speculative_parts(always_normalise), "draft equal to target", "do not divide by it")


def test_accept_probability_without_the_min_is_caught():
    def unclipped(p, q):
        ratio = np.divide(p, q, out=np.ones_like(p), where=q > 0)
        return ratio, speculative.speculative_mass(p, q).residual

    result = check.speculative_parts(unclipped)
    _failed(result, "accept[0] (p = 0.6, q = 0.4)", "never more than 1")
    assert abs(result.got - 1.5) < 1e-12


# --- 10 decode_step_lower_bound_ms ---------------------------------------------------------------


def test_bandwidth_bound_in_seconds_is_caught():
    def in_seconds(budget, batch):
        weights, cache = _bytes(budget)
        return (weights + batch * cache) / budget.bandwidth_bytes_per_second

    result = check.decode_step_lower_bound_ms(in_seconds)
    _failed(result, "batch 1", "milliseconds")
    assert result.expected == 15.073741824


def _bytes(budget):
    """(weight bytes, one request's cache bytes) from the layout's fields."""
    cache = 2 * budget.n_layers * budget.context * budget.n_kv_heads * budget.head_dim * budget.kv_bytes_per_element
    return budget.n_params * budget.bytes_per_param, cache


def test_bandwidth_bound_that_reads_the_weights_per_request_is_caught_at_batch_8():
    def weights_per_request(budget, batch):
        weights, cache = _bytes(budget)
        return batch * (weights + cache) / budget.bandwidth_bytes_per_second * 1000

    result = check.decode_step_lower_bound_ms(weights_per_request)
    _failed(result, "batch 8", "read once per step")
    assert result.expected == 22.589934592


def test_bandwidth_bound_without_values_in_the_cache_is_caught():
    def keys_only(budget, batch):
        weights, cache = _bytes(budget)
        return (weights + batch * cache / 2) / budget.bandwidth_bytes_per_second * 1000

    _failed(check.decode_step_lower_bound_ms(keys_only), "batch 1", "keys and values")


def test_bandwidth_exercise_hands_over_the_layout_not_labkits_answer():
    result = check.decode_step_lower_bound_ms(lambda budget, batch: budget.step(batch)["lower_bound_ms"])
    assert not result.passed and "has no attribute 'step'" in result.message, repr(result)


# --- 11 compensated_local_gradients ----------------------------------------------------------------


def test_per_rank_means_are_recognised_as_the_naive_average():
    result = check.compensated_local_gradients(lambda sums, counts: sums / counts)
    _failed(result, "rank 0 (S_0 = -1.0, n_0 = 2)", "the naive 0.0, not the global 0.25")
    assert result.got == -0.5 and result.expected == unequal_rank.run()["compensated_local_gradients"][0]


def test_scaling_by_the_global_count_alone_forgets_the_world_size():
    _failed(
        check.compensated_local_gradients(lambda sums, counts: sums / counts.sum()), "rank 0", "multiply by R as well"
    )


def test_sending_the_global_mean_from_every_rank_is_caught():
    def everyone_sends_the_answer(sums, counts):
        return np.full(len(sums), sums.sum() / counts.sum())

    _failed(check.compensated_local_gradients(everyone_sends_the_answer), "rank 0", "its own sum S_r")


# --- 12 report_problems ----------------------------------------------------------------------------

_TOP = ("status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs")


def test_report_check_of_top_level_keys_only_misses_a_bad_status():
    def keys_only(report):
        return [f"missing {key}" for key in _TOP if key not in report]

    _failed(check.report_problems(keys_only), "status is “ok”", "values as well as the keys")


def test_report_check_that_forbids_failed_lab_rejects_a_real_failed_report():
    def no_failure_fields(report):
        if not isinstance(report, dict):
            return ["not an object"]
        return [f"unexpected key {key}" for key in report if key not in _TOP]

    result = check.report_problems(no_failure_fields)
    _failed(result, "a real report of a failed run", "failed_lab and failure")
    assert result.expected == [] and "unexpected key failed_lab" in result.got


def test_report_problems_that_do_not_name_the_key_are_caught(answer_key):
    module = answer_key("labs_ii")

    def vague(report):  # judges right, but never says where
        return ["something is wrong"] if module.report_problems(report) else []

    result = check.report_problems(vague)
    _failed(result, "a passing report without “runtime”", "name the key")
    assert result.expected == "a problem naming 'runtime'"


def test_report_problems_returning_a_bool_gets_a_clear_message():
    result = check.report_problems(lambda report: False)
    assert not result.passed and "return a list of strings" in result.message, repr(result)


def test_report_check_that_indexes_blindly_crashes_on_a_damaged_report_and_is_told_where():
    def blind(report):
        problems = [] if report["status"] in ("passed", "failed") else ["status"]
        return problems + ([] if report["runtime"]["dtype"] == "float64" else ["runtime dtype"])

    result = check.report_problems(blind)
    _failed(result, "a passing report without “runtime”", "look before you index")
    assert "raised KeyError: 'runtime'" in result.got and result.message == "a damaged report crashed your function"


def test_a_crash_or_a_wrong_shape_names_the_case_it_happened_on():
    def python_math_kl(p, q):  # divides by zero where q has a zero
        return sum(a * math.log(a / b) for a, b in zip(p.tolist(), q.tolist(), strict=True) if a > 0)

    crashed = check.kl_divergence(python_math_kl)
    assert not crashed.passed
    assert crashed.message.startswith(
        "on case “the same pair reversed: mass where the reference has none”: your function raised ZeroDivisionError"
    ), crashed.message
    flat = check.grpo_advantages(lambda rewards, ddof, eps: np.zeros(np.size(rewards)))
    assert flat.message == (
        "on case “the lab's three groups, ddof 0, ε = 1e-8”: the advantages must have shape [3, 4], got [12]"
    ), flat.message
