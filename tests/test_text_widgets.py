"""Trace one's static views: the first step's logits and the prefill attention (the stepper is a player)."""

from __future__ import annotations

import numpy as np
import pytest

from labkit.text.runtime import run_text_trace


@pytest.fixture(scope="module")
def run():
    return run_text_trace()


def test_step_views_keep_raw_and_processed_logits_apart(run):
    first = run.steps[0]
    assert np.isfinite(first.raw_logits).all()
    assert first.masked_ids == [0, 1, 2, 3, 4, 5, 6, 18, 19]
    allowed = [i for i in range(20) if i not in first.masked_ids]
    assert np.array_equal(first.raw_logits[allowed], first.processed_logits[allowed])


def test_prefill_attention_view_is_causal_and_normalised(run):
    for layer in run.prefill.layers:
        weights = layer.attention_weights[0]  # [H_q, 12, 12]
        assert weights.shape == (2, 12, 12)
        future = np.triu(np.ones((12, 12), dtype=bool), k=1)
        assert np.all(weights[:, future] == 0), f"layer {layer.layer} attends to future keys"
        assert np.allclose(weights.sum(-1), 1, atol=1e-6)
