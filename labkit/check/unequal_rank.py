"""Exercise of lab 11: the compensated local gradient for unequal ranks."""

from __future__ import annotations

import numpy as np

from labkit.check._support import close, failure_at, first_bad_index, in_case
from labkit.check.core import CheckResult, call, exercise, numeric_array, passed


def _rank_cases():
    from labkit.labs import unequal_rank

    return {
        "the lab's ranks: two tokens of target 1, six of target 0, w = 0": {},
        "one target-1 token moved to rank 1: ranks [1] and [1, 0, 0, 0, 0, 0, 0]": {
            "rank_targets": ((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        },
        "the lab's ranks at w = 1.3": {"w": 1.3},
        "equal token counts (three each)": {"rank_targets": ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))},
        "three ranks of 1, 4 and 7 tokens": {
            "rank_targets": ((1.0,), (0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
        },
    }, unequal_rank.run


@exercise(
    "compensated_local_gradients",
    page="notebooks/11-labs/11-unequal-rank-gradients.md",
    signature=("rank_gradient_sums", "rank_token_counts"),
    kind="extend",
    idea=(
        "the all-reduce averages over ranks, but the loss averages over tokens; ranks hold different numbers of tokens"
    ),
)
def compensated_local_gradients(candidate) -> CheckResult:
    """return [R] the gradient each rank hands to the averaging all-reduce, so that their mean is
    the global token mean Σ S_r / Σ n_r (rank_gradient_sums S [R] float, rank_token_counts n [R]
    int)"""
    cases, run = _rank_cases()
    for case, options in cases.items():
        report = run(**options)
        sums = np.array(report["rank_gradient_sums"])
        counts = np.array(report["rank_token_counts"])
        expected = np.array(report["compensated_local_gradients"])
        with in_case(case):
            got = numeric_array(call(candidate, sums.copy(), counts.copy()), "the local gradients", expected.shape)
        bad = first_bad_index(got, expected)
        if bad is None:
            continue
        (r,) = bad
        world, total = sums.size, counts.sum()
        global_mean = report["global_token_average"]
        if close(got, sums / counts):
            hint = (
                f"these are the per-rank means S_r / n_r; the all-reduce averages them into the naive "
                f"{float(np.mean(sums / counts))!r}, not the global {global_mean!r}"
            )
        elif close(got, sums / total):
            hint = f"the all-reduce divides by R = {world}: multiply by R as well as dividing by N"
        elif close(got, np.full(world, global_mean)):
            hint = (
                "the mean comes out right, but rank r can only send what it knows — its own sum S_r, "
                "plus N and R: each rank's value is its own sum, rescaled"
            )
        else:
            hint = (
                "the all-reduce computes (1/R)·Σ_r g_r; choose each rank's g_r from its own S_r so that "
                "this equals Σ S_r / N"
            )
        return failure_at(
            "a rank's local gradient differs",
            got,
            expected,
            r,
            where=f"case “{case}”, rank {r} (S_{r} = {float(sums[r])!r}, n_{r} = {int(counts[r])})",
            rule="g_r = S_r · R / N, N = Σ n_r (within 1e-12)",
            hint=hint,
        )
    return passed(
        f"all {len(cases)} cases match; the lab's ranks send [−0.25, 0.75], "
        "whose average 0.25 is the global token mean (the naive average is 0.0)"
    )
