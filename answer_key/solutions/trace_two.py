"""Worked solutions for trace two (pages 04–06, §7.6–7.8): what a student would hand in."""

import math

import numpy as np

# page 04: the counter is recorded with the first latent, in latent.initialized
counter_offset_first_event = "d01"


def shared_latent_numbers(shape, counter_a, counter_b):
    # a latent of n numbers takes n/4 blocks (four normals a block): counters [a, a + n/4) and
    # [b, b + n/4); two windows of one width share width − |a − b| blocks when they overlap
    blocks = math.prod(shape) // 4
    return 4 * max(0, blocks - abs(counter_a - counter_b))


# page 05: ε_u + 1·(ε_c − ε_u) = ε_c
cfg_scale_one = "conditional"


def recover_guidance_scale(epsilon_batch, epsilon_guided):
    # ε̂ − ε_u = s·(ε_c − ε_u): least squares over every entry; (1 + w)ε_c − wε_u = ε_u + (1 + w)(ε_c − ε_u)
    batch = np.asarray(epsilon_batch, dtype=np.float64)
    difference = (batch[1] - batch[0]).ravel()
    deviation = (np.asarray(epsilon_guided, dtype=np.float64)[0] - batch[0]).ravel()
    s = float(difference @ deviation / (difference @ difference))
    return s, s - 1.0


# page 06: x̂₀ = (1 − √0.75)/0.5, z₁ = 0.8·x̂₀ + 0.6·1 (and the mirror image)
_x0 = (1 - math.sqrt(0.75)) / 0.5
x0_fed_as_epsilon = (0.8 * _x0 + 0.6, -(0.8 * _x0 + 0.6))


def ddim_v_update(z_t, v, t, prev_t, alpha_bars):
    # (z_t, v) = (a·x₀ + b·ε, a·ε − b·x₀) with a = √ᾱ_t, b = √(1 − ᾱ_t), a² + b² = 1: rotate back
    a, b = math.sqrt(alpha_bars[t]), math.sqrt(1.0 - alpha_bars[t])
    a_prev = 1.0 if prev_t is None else alpha_bars[prev_t]
    z, velocity = np.asarray(z_t, dtype=np.float64), np.asarray(v, dtype=np.float64)
    x0_hat = a * z - b * velocity
    epsilon = b * z + a * velocity
    z_prev = math.sqrt(a_prev) * x0_hat + math.sqrt(1.0 - a_prev) * epsilon
    return z_prev.astype(z_t.dtype), x0_hat.astype(z_t.dtype)
