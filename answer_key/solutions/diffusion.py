"""Solution for trace two (§7.8): one DDIM step as the loop calls it."""

import numpy as np


def ddim_update(z_t, epsilon, t, prev_t, alpha_bars):
    signal_t = alpha_bars[t]
    signal_prev = 1.0 if prev_t is None else alpha_bars[prev_t]
    z, eps = z_t.astype(np.float64), epsilon.astype(np.float64)
    estimate = (z - np.sqrt(1.0 - signal_t) * eps) / np.sqrt(signal_t)
    previous = np.sqrt(signal_prev) * estimate + np.sqrt(1.0 - signal_prev) * eps
    return previous.astype(z_t.dtype), estimate.astype(z_t.dtype)
