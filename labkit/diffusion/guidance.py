"""Classifier-free guidance: one network evaluation, two branches, one combined ε̂ (source §7.7).

The CFG batch is built in ``cfg_order`` (the book's is negative first), so the network
returns ε for [c_neg, c_pos] in that order and the split reads row 0 as ε_neg:

    ε̂ = ε_neg + w · (ε_pos − ε_neg)          w: guidance scale (5.0 in §7.6)

w = 0 keeps only the negative branch, w = 1 only the positive one; w > 1 pushes past the
conditional prediction, away from the negative one.
"""

from __future__ import annotations

import numpy as np

from labkit.core.guards import is_number


def classifier_free_guidance(epsilon_batch, guidance_scale: float) -> np.ndarray:
    """ε̂ from the CFG batch: epsilon_batch [2, C, H, W] rows (negative, positive) → [1, C, H, W].

    The result keeps the batch's dtype (float32 in trace two).
    """
    batch = np.asarray(epsilon_batch)
    if batch.ndim < 1 or batch.shape[0] != 2:
        raise ValueError(
            f"epsilon_batch must have 2 rows (negative, positive) on axis 0, got shape {list(batch.shape)}"
        )
    if not is_number(guidance_scale) or not guidance_scale >= 0:
        raise ValueError(f"guidance_scale must be a number >= 0, got {guidance_scale!r}")
    eps_neg, eps_pos = batch[0:1], batch[1:2]  # the split assumes negative first
    scale = np.asarray(guidance_scale, dtype=batch.dtype)
    return (eps_neg + scale * (eps_pos - eps_neg)).astype(batch.dtype)  # ε̂ = ε_neg + w(ε_pos − ε_neg)
