"""Solutions for trace two (§7.6–7.8): words → normals, the CFG combination, one DDIM step."""

import numpy as np


def words_to_normals(words):
    u = (np.asarray(words, dtype=np.float64) + 0.5) / 2.0**32  # the centre of each of 2³² cells
    radius = np.sqrt(-2.0 * np.log(u[:, 0::2]))  # from x₀ and x₂: [B, 2]
    angle = 2.0 * np.pi * u[:, 1::2]  # from x₁ and x₃: [B, 2]
    pairs = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)  # [B, 2 pairs, (cos, sin)]
    return pairs.reshape(-1)  # block by block: n₀ n₁ n₂ n₃


def cfg_combine(epsilon_batch, guidance_scale):
    unconditional, conditional = epsilon_batch[:1], epsilon_batch[1:]  # built [c_neg, c_pos]
    return unconditional + guidance_scale * (conditional - unconditional)


def ddim_update(z_t, epsilon, t, prev_t, alpha_bars):
    signal_t = alpha_bars[t]
    signal_prev = 1.0 if prev_t is None else alpha_bars[prev_t]
    z, eps = z_t.astype(np.float64), epsilon.astype(np.float64)
    estimate = (z - np.sqrt(1.0 - signal_t) * eps) / np.sqrt(signal_t)
    previous = np.sqrt(signal_prev) * estimate + np.sqrt(1.0 - signal_prev) * eps
    return previous.astype(z_t.dtype), estimate.astype(z_t.dtype)
