"""Exercise of lab 03: causal self-attention."""

from __future__ import annotations

import numpy as np

from labkit.check._support import ATOL, failure_at, first_bad_index
from labkit.check.core import CheckResult, as_array, call, exercise, failure, passed, unpack


def _attention_cases() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    from labkit.labs.causal_attention import PERTURB_FROM, PREFIX_SEED

    x = np.random.default_rng(PREFIX_SEED).normal(size=(1, 5, 4))[0]
    pushed = x.copy()
    pushed[PERTURB_FROM:] += 100.0
    other = np.random.default_rng(5).normal(0.0, 1.5, size=(3, 6, 8))
    return {
        "the hand example as row 1 of two tokens": (
            np.array([[1.0, 0.0], [1.0, 0.0]]),
            np.array([[1.0, 0.0], [0.0, 1.0]]),
            np.array([[2.0, 0.0], [0.0, 4.0]]),
        ),
        "the lab's seeded five tokens (q = k = v = x)": (x, x, x),
        f"the same five tokens, positions ≥ {PERTURB_FROM} pushed by +100": (pushed, pushed, pushed),
        "six tokens with d_h = 8 and separate q, k, v": tuple(other),
    }


def _attend(q, k, v, allowed):
    from labkit.nn.attention import attention

    output, weights = attention(q[None], k[None], v[None], allowed)
    return output[0], weights[0]


@exercise(
    "causal_self_attention",
    page="notebooks/11-labs/03-causal-attention.md",
    signature=("q", "k", "v"),
    kind="extend",
    idea=(
        "causal attention: each position weighs only the past and itself, and the weights of a row are a "
        "probability distribution"
    ),
)
def causal_self_attention(candidate) -> CheckResult:
    """one head of causal self-attention: q, k, v [T, d_h] → (output [T, d_h], weights [T, T]),
    scores q·kᵀ/√d_h, key j visible to query i only when j ≤ i"""
    for case, (q, k, v) in _attention_cases().items():
        t, head_dim = q.shape
        allowed = np.tril(np.ones((t, t), dtype=bool))
        expected_out, expected_w = _attend(q, k, v, allowed)
        output, weights = unpack(call(candidate, q.copy(), k.copy(), v.copy()), ("output", "weights"))
        weights = as_array(weights, "weights", shape=(t, t), dtype_kind="float")
        output = as_array(output, "output", shape=(t, head_dim), dtype_kind="float")
        where = f"case “{case}”"
        bad = first_bad_index(weights, expected_w)
        if bad is not None:
            i, j = bad
            unscaled = _attend(q * np.sqrt(head_dim), k, v, allowed)[1]
            leaks = np.flatnonzero(weights[i, i + 1 :] != 0.0)
            if leaks.size:  # the row's root cause: weight on a future key
                j = i + 1 + int(leaks[0])
                rule = "zero weight on every future key (j > i)"
                hint = (
                    "a future key must be removed before the softmax (its score becomes −∞), so it gets "
                    "exactly zero weight and cannot leak into the past"
                )
            elif abs(weights[i].sum() - 1.0) > 1e-9:
                rule = f"each row of weights sums to 1 (row {i} sums to {weights[i].sum():.6g})"
                hint = (
                    "the softmax must normalise over the keys the query may see; zeroing weights after a "
                    "softmax over all keys leaves the row short of 1"
                )
            elif np.allclose(weights, unscaled, atol=ATOL, rtol=0.0):
                rule = "scores are q·k divided by √d_h"
                hint = (
                    f"without the 1/√d_h factor (here √{head_dim}) the scores grow with the head size "
                    "and the softmax becomes too sharp"
                )
            else:
                rule = "weights[i] = softmax over j ≤ i of q_i·k_j / √d_h"
                hint = "score each visible key, scale, and normalise the row with a softmax"
            return failure(
                "an attention weight is wrong",
                where=f"{where}, weights[{i}, {j}]",
                rule=rule,
                got=weights[i, j].item(),
                expected=expected_w[i, j].item(),
                hint=hint,
            )
        bad = first_bad_index(output, expected_out)
        if bad is not None:
            return failure_at(
                "the weights are right but the output is not",
                output,
                expected_out,
                bad,
                where=f"{where}, output{list(bad)}",
                rule="output[i] = Σ_j weights[i, j] · v[j]",
                hint="each output row is the weighted average of the value rows, with that query's weights",
            )
    hand_output = _attend(
        *_attention_cases()["the hand example as row 1 of two tokens"], np.tril(np.ones((2, 2), dtype=bool))
    )
    return passed(
        f"all {len(_attention_cases())} cases match; the hand example gives weights "
        f"{np.round(hand_output[1][1], 4).tolist()} and output "
        f"{np.round(hand_output[0][1], 4).tolist()}, and the pushed future leaves "
        "the prefix untouched"
    )
