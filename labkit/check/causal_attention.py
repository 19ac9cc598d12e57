"""Exercise of lab 03: one head of causal self-attention, on the hand example and seeded tokens."""

from __future__ import annotations

import numpy as np

from labkit.check.grading import function


def _attention_cases():
    from labkit.labs.causal_attention import PERTURB_FROM, PREFIX_SEED

    x = np.random.default_rng(PREFIX_SEED).normal(size=(1, 5, 4))[0]
    pushed = x.copy()
    pushed[PERTURB_FROM:] += 100.0
    other = np.random.default_rng(5).normal(0.0, 1.5, size=(3, 6, 8))
    hand = (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 4.0]]))
    return [
        ("the hand example as row 1 of two tokens", hand),
        ("the lab's seeded five tokens (q = k = v = x)", (x, x, x)),
        (f"the same five tokens, positions ≥ {PERTURB_FROM} pushed by +100", (pushed, pushed, pushed)),
        ("six tokens with d_h = 8 and separate q, k, v", tuple(other)),
    ]


def _attend(q, k, v):
    """Hidden reference: the kit's batched kernel under a causal mask, for one head."""
    from labkit.nn.attention import attention

    t = q.shape[0]
    output, weights = attention(q[None], k[None], v[None], np.tril(np.ones((t, t), dtype=bool)))
    return output[0], weights[0]


function(
    "causal_self_attention",
    "notebooks/11-labs/03-causal-attention.md",
    "extend",
    "one head of causal self-attention over [T, d_h] arrays: q, k, v → (output [T, d_h], weights [T, T]), "
    "key j visible to query i only when j ≤ i (the page's kernel is batched and takes a mask; this one builds it)",
    ("q", "k", "v"),
    _attention_cases,
    _attend,
    idea="causal attention: each position weighs only the past and itself, and the weights of a row are a "
    "probability distribution",
    outputs=("output", "weights"),
    first="weights",
    rule="a future key must be removed before the softmax, not after; the scores shrink with the head size; "
    "the output row averages the value rows with that query's weights",
)
