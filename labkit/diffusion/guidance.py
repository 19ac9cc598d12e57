"""Classifier-free guidance: one network evaluation, two branches, one combined ε̂ (source §7.7).

The CFG batch is built in ``cfg_order`` (the book's is negative first), so the network
returns ε for [c_neg, c_pos] in that order and the split reads row 0 as ε_neg:

    ε̂ = ε_neg + w · (ε_pos − ε_neg)          w: guidance scale (5.0 in §7.6)

w = 0 keeps only the negative branch, w = 1 only the positive one; w > 1 pushes past the
conditional prediction, away from the negative one.
"""

import numpy as np

from labkit.core.guards import real_array, real_number


def check_guidance_scale(guidance_scale) -> float:
    """w as a float: a finite real number >= 0 (not a bool, not a string).  The runtimes call
    this before any work, so a bad scale is refused before the network runs."""
    return real_number("guidance_scale", guidance_scale, 0.0, expected="a number >= 0") + 0.0  # + 0.0: no −0


def classifier_free_guidance(epsilon_batch, guidance_scale: float) -> np.ndarray:
    """ε̂ from the CFG batch: epsilon_batch [2, C, H, W] rows (negative, positive) → [1, C, H, W], in the
    batch's dtype (a finite float array: an integer one would round w, 5.5 acting as 5)."""
    batch = real_array("epsilon_batch", epsilon_batch)
    if batch.ndim < 1 or batch.shape[0] != 2:
        raise ValueError(
            f"epsilon_batch must have 2 rows (negative, positive) on axis 0, got shape {list(batch.shape)}"
        )
    guidance_scale = check_guidance_scale(guidance_scale)
    eps_neg, eps_pos = batch[0:1], batch[1:2]  # the split assumes negative first
    scale = np.asarray(guidance_scale, dtype=batch.dtype)
    return (eps_neg + scale * (eps_pos - eps_neg)).astype(batch.dtype)  # ε̂ = ε_neg + w(ε_pos − ε_neg)
