"""Exercise of lab 11: the compensated local gradient for ranks with unequal token counts."""

from __future__ import annotations

import numpy as np

from labkit.check.grading import function

#: (case, options of unequal_rank.run): the sums and counts handed over come from the lab's own run
RANK_CASES = (
    ("the lab's ranks: two tokens of target 1, six of target 0, w = 0", {}),
    (
        "one target-1 token moved to rank 1: ranks [1] and [1, 0, 0, 0, 0, 0, 0]",
        {"rank_targets": ((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))},
    ),
    ("the lab's ranks at w = 1.3", {"w": 1.3}),
    ("equal token counts (three each)", {"rank_targets": ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))}),
    (
        "three ranks of 1, 4 and 7 tokens",
        {"rank_targets": ((1.0,), (0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))},
    ),
)


def _cases():
    from labkit.labs import unequal_rank

    reports = [(case, unequal_rank.run(**options)) for case, options in RANK_CASES]
    return [(case, (np.array(r["rank_gradient_sums"]), np.array(r["rank_token_counts"]))) for case, r in reports]


def _compensated(sums, counts):
    """Hidden reference (the lab's run computes the same): each rank rescales its own sum."""
    return sums * sums.size / counts.sum()


function(
    "compensated_local_gradients",
    "notebooks/11-labs/11-unequal-rank-gradients.md",
    "extend",
    "return [R] the gradient each rank hands to the averaging all-reduce, so that their mean is the global "
    "token mean (rank_gradient_sums S [R] float, rank_token_counts n [R] int)",
    ("rank_gradient_sums", "rank_token_counts"),
    _cases,
    _compensated,
    idea="the all-reduce averages over ranks, but the loss averages over tokens; ranks hold different numbers "
    "of tokens",
    outputs=("local_gradients",),
    rule="the all-reduce divides by the number of ranks, the loss by the number of tokens; each rank may only "
    "use its own sum and the two totals",
)
