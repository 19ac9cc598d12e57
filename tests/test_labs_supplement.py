"""Supplement: bandwidth budget and unequal-rank gradients.  (Its third lab, the wrong rejection
fallback, restates speculative sampling's decomposition and is tested in test_labs_speculative.py.)"""

import math

import numpy as np
import pytest
from _helpers import assert_matches_source
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import bandwidth, unequal_rank

SOURCE_BANDWIDTH = {
    "scope": "self-defined streaming-read lower bound, not measured throughput",
    "weight_bytes": 14000000000,
    "per_request_kv_bytes": 1073741824,
    "assumed_bandwidth_bytes_per_second": 1000000000000,
    "cases": [
        {
            "batch": 1,
            "read_bytes": 15073741824,
            "lower_bound_ms": 15.073741824,
            "aggregate_token_rate_ceiling": 66.34052856125128,
            "per_request_token_rate_ceiling": 66.34052856125128,
        },
        {
            "batch": 8,
            "read_bytes": 22589934592,
            "lower_bound_ms": 22.589934592,
            "aggregate_token_rate_ceiling": 354.1400249486831,
            "per_request_token_rate_ceiling": 44.26750311858539,
        },
    ],
}
SOURCE_UNEQUAL_RANK = {
    "rank_token_counts": [2, 6],
    "rank_gradient_sums": [-1.0, 3.0],
    "rank_mean_gradients": [-0.5, 0.5],
    "naive_average": 0.0,
    "global_token_average": 0.25,
    "compensated_local_gradients": [-0.25, 0.75],
    "ddp_average_after_compensation": 0.25,
    "learning_rate": 0.4,
    "old_w": 0.0,
    "correct_new_w": -0.1,
    "new_probability": 0.47502081252106,
    "old_global_loss": 0.6931471805599453,
    "correct_new_global_loss": 0.6693966600735709,
    "naive_new_global_loss": 0.6931471805599453,
    "scope": "one scalar logistic-regression step, not a multigpu execution",
}


@pytest.mark.parametrize(
    ("name", "lab", "reference"),
    [
        ("bandwidth_budget", bandwidth.run, SOURCE_BANDWIDTH),
        ("unequal_rank_gradients", unequal_rank.run, SOURCE_UNEQUAL_RANK),
    ],
)
def test_supplement_object_matches_source_report(name, lab, reference):
    assert_matches_source(name, lab(), reference)


def test_kv_cache_of_the_7b_layout_is_one_gibibyte_per_request():
    budget = bandwidth.DecodeBudget()
    assert budget.kv_bytes_per_request == 2 * 32 * 8192 * 8 * 128 * 2 == 2**30


def test_batching_raises_the_aggregate_ceiling_and_lowers_each_request_s():
    budget = bandwidth.DecodeBudget()
    steps = [budget.step(b) for b in (1, 2, 4, 8, 16, 32)]
    aggregate = [s["aggregate_token_rate_ceiling"] for s in steps]
    per_request = [s["per_request_token_rate_ceiling"] for s in steps]
    assert aggregate == sorted(aggregate) and per_request == sorted(per_request, reverse=True)
    # the ceiling on aggregate rate approaches B / kv_bytes as the batch grows
    limit = budget.bandwidth_bytes_per_second / budget.kv_bytes_per_request
    assert aggregate[-1] < limit


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_params": 0}, "DecodeBudget.n_params must be a positive integer, got 0"),
        ({"head_dim": 1.5}, "DecodeBudget.head_dim must be a positive integer"),
        ({"bandwidth_bytes_per_second": -1}, "DecodeBudget.bandwidth_bytes_per_second"),
    ],
)
def test_bandwidth_bad_budget_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bandwidth.DecodeBudget(**kwargs)
    with pytest.raises(ValueError, match="batch must be a positive integer, got 0"):
        bandwidth.DecodeBudget().step(0)


def test_naive_step_leaves_the_loss_unchanged_but_the_global_step_lowers_it():
    report = unequal_rank.run()
    assert report["naive_average"] == 0.0 and report["global_token_average"] == 0.25
    assert report["naive_new_global_loss"] == report["old_global_loss"] == pytest.approx(math.log(2), abs=1e-16)
    assert report["correct_new_global_loss"] < report["old_global_loss"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=9), min_size=2, max_size=5),
    st.floats(min_value=-2, max_value=2),
)
def test_compensated_all_reduce_equals_the_global_token_mean(ranks, w):
    report = unequal_rank.run(rank_targets=ranks, w=w)
    p = unequal_rank.sigmoid(w)
    flat = np.concatenate([np.array(r) for r in ranks])
    one_big_batch = float(np.mean(p - flat))
    gap = abs(report["ddp_average_after_compensation"] - one_big_batch)
    assert gap < 1e-12, (
        f"compensated all-reduce {report['ddp_average_after_compensation']!r} vs one big batch {one_big_batch!r}"
    )


def test_unequal_rank_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="rank 1 targets must be 0 or 1"):
        unequal_rank.run(rank_targets=[[1.0], [0.5]])
    with pytest.raises(ValueError, match="at least 2 ranks"):
        unequal_rank.run(rank_targets=[[1.0, 0.0]])
    with pytest.raises(ValueError, match="learning_rate must be a positive finite number"):
        unequal_rank.run(learning_rate=0.0)
