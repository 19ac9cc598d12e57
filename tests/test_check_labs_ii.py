"""Exercises of labs 06–12: typical wrong answers are caught at the expected place with the expected hint.

tests/test_check.py already runs every solution (must pass) and the stub/crash/signature
cases; here each exercise meets one or two deliberately wrong answers.
"""

import numpy as np
import pytest

import labkit.check as check
from labkit.labs import speculative, unequal_rank


def _failed(result, where_part: str) -> None:
    assert not result.passed, f"expected a failure, got {result!r}"
    assert where_part in (result.where or result.message), f"where/message lacks {where_part!r}:\n{result!r}"
    assert result.hint, f"no rule-level hint:\n{result!r}"


def _sigmoid_pull(policy, reference, beta):
    m = beta * ((policy[0] - reference[0]) - (policy[1] - reference[1]))
    return beta / (1.0 + np.exp(m))


# --- 06 dpo_gradient ---------------------------------------------------------------------------


# --- 07 grpo_advantages ------------------------------------------------------------------------


# --- 08 kl_divergence --------------------------------------------------------------------------


# --- 09 speculative_parts ----------------------------------------------------------------------


def test_refilling_from_p_is_recognised_as_the_wrong_fallback():
    def refill_from_target(p, q):
        return speculative.speculative_mass(p, q).accept_probability, np.asarray(p)

    result = check.speculative_parts(refill_from_target)
    _failed(result, "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, residual[0]")
    assert result.got == 0.6 and result.expected == 1.0


def test_residual_that_divides_by_zero_when_p_equals_q_is_caught():
    def always_normalise(p, q):
        excess = np.maximum(p - q, 0.0)
        with np.errstate(invalid="ignore"):
            return speculative.speculative_mass(p, q).accept_probability, excess / excess.sum()

    _failed(check.speculative_parts(always_normalise), "draft equal to target")


def test_accept_probability_without_the_min_is_caught():
    def unclipped(p, q):
        ratio = np.divide(p, q, out=np.ones_like(p), where=q > 0)
        return ratio, speculative.speculative_mass(p, q).residual

    result = check.speculative_parts(unclipped)
    _failed(result, "q = [0.4, 0.4, 0.2]”, accept[0]")
    assert abs(result.got - 1.5) < 1e-12


def test_second_draft_verified_against_the_target_again_is_caught_at_accept():
    def against_p(p, q):  # the last residual right, the second draft judged against p as if nothing happened
        first = speculative.speculative_mass(p, q)
        return first.accept_probability, speculative.speculative_mass(first.residual, q).residual

    result = check.second_draft(against_p)
    _failed(result, "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]”, accept[1]")
    assert result.got == pytest.approx(0.75) and result.expected == 0.0


def test_second_draft_whose_last_residual_comes_from_the_target_is_caught_at_residual():
    def residual_of_p(p, q):
        first = speculative.speculative_mass(p, q)
        return speculative.speculative_mass(first.residual, q).accept_probability, first.residual

    _failed(check.second_draft(residual_of_p), "”, residual[")


# --- 10 decode_step_lower_bound_ms ---------------------------------------------------------------


def test_bandwidth_bound_in_seconds_is_caught():
    def in_seconds(budget, batch):
        weights, cache = _bytes(budget)
        return (weights + batch * cache) / budget.bandwidth_bytes_per_second

    result = check.decode_step_lower_bound_ms(in_seconds)
    _failed(result, "batch 1")
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
    _failed(result, "batch 8")
    assert result.expected == 22.589934592


def test_bandwidth_bound_without_values_in_the_cache_is_caught():
    def keys_only(budget, batch):
        weights, cache = _bytes(budget)
        return (weights + batch * cache / 2) / budget.bandwidth_bytes_per_second * 1000

    _failed(check.decode_step_lower_bound_ms(keys_only), "batch 1")


def test_bandwidth_exercise_hands_over_the_layout_not_labkits_answer():
    result = check.decode_step_lower_bound_ms(lambda budget, batch: budget.step(batch)["lower_bound_ms"])
    assert not result.passed and "has no attribute 'step'" in result.message, repr(result)


# --- 11 compensated_local_gradients ----------------------------------------------------------------


def test_per_rank_means_are_recognised_as_the_naive_average():
    result = check.compensated_local_gradients(lambda sums, counts: sums / counts)
    _failed(result, "w = 0”, local_gradients[0]")
    assert result.got == -0.5 and result.expected == unequal_rank.run()["compensated_local_gradients"][0]


def test_scaling_by_the_global_count_alone_forgets_the_world_size():
    _failed(check.compensated_local_gradients(lambda sums, counts: sums / counts.sum()), "local_gradients[0]")


def test_sending_the_global_mean_from_every_rank_is_caught():
    def everyone_sends_the_answer(sums, counts):
        return np.full(len(sums), sums.sum() / counts.sum())

    _failed(check.compensated_local_gradients(everyone_sends_the_answer), "local_gradients[0]")


# --- 12 report_problems ----------------------------------------------------------------------------

_TOP = ("status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs")


def test_report_check_of_top_level_keys_only_misses_a_bad_status():
    def keys_only(report):
        return [f"missing {key}" for key in _TOP if key not in report]

    _failed(check.report_problems(keys_only), "status is “ok”")


def test_report_check_that_forbids_failed_lab_rejects_a_real_failed_report():
    def no_failure_fields(report):
        if not isinstance(report, dict):
            return ["not an object"]
        return [f"unexpected key {key}" for key in report if key not in _TOP]

    result = check.report_problems(no_failure_fields)
    _failed(result, "a real report of a failed run")
    assert result.expected == [] and "unexpected key failed_lab" in result.got


def test_report_problems_that_do_not_name_the_key_are_caught(answer_key):
    module = answer_key("labs_ii")

    def vague(report):  # judges right, but never says where
        return ["something is wrong"] if module.report_problems(report) else []

    result = check.report_problems(vague)
    _failed(result, "a passing report without “runtime”")
    assert result.expected == "a problem naming 'runtime'"


def test_report_problems_returning_a_bool_gets_a_clear_message():
    result = check.report_problems(lambda report: False)
    assert not result.passed and "return a list of strings" in result.message, repr(result)


def test_report_check_that_indexes_blindly_crashes_on_a_damaged_report_and_is_told_where():
    def blind(report):
        problems = [] if report["status"] in ("passed", "failed") else ["status"]
        return problems + ([] if report["runtime"]["dtype"] == "float64" else ["runtime dtype"])

    result = check.report_problems(blind)
    _failed(result, "a passing report without “runtime”")
    assert "raised KeyError: 'runtime'" in result.got and result.message == "a damaged report crashed your function"
