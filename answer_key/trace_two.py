"""The key to trace two's graded exercises (pages 04–06): each hidden reference and the hidden cases it is
compared on — other shapes, counters, schedules and dtypes than the public checks in
``labkit/check/trace_two.py`` use, so an answer fitted to those cases fails here."""

from __future__ import annotations

import math

import numpy as np

from labkit.check.core import function
from labkit.check.trace_two import zero_terminal_snr
from labkit.diffusion.ddim import alphas_cumprod
from labkit.diffusion.guidance import classifier_free_guidance

# --- page 04 ------------------------------------------------------------------------------------------


def _counters():
    """Shapes and counters the public check's real draws do not cover: a batch, past 2³², and windows that
    run past 2⁶⁴, which Philox's 128-bit counter allows but the book's stream never draws (so a reader
    who simulates with the kit instead of deriving fails here)."""
    return [
        ("[1, 4, 64, 64], counters 2⁶⁴ − 100 and 2⁶⁴ − 50", ((1, 4, 64, 64), 2**64 - 100, 2**64 - 50)),
        ("three latents in a batch, counters 0 and 4096 (the fault's offset)", ((3, 4, 64, 64), 0, 4096)),
        ("[1, 4, 128, 128], counters 0 and 16383", ((1, 4, 128, 128), 0, 16383)),
        ("[1, 4, 96, 128], counters 2³² − 10 and 2³² + 2000", ((1, 4, 96, 128), 2**32 - 10, 2**32 + 2000)),
        ("[1, 4, 64, 64], counters 12345 and 12345", ((1, 4, 64, 64), 12345, 12345)),
        ("[4, 4, 2, 2], counters 9 and 0", ((4, 4, 2, 2), 9, 0)),
        ("[1, 4, 1, 1], counters 3 and 4", ((1, 4, 1, 1), 3, 4)),
    ]


@function(_counters)
def shared_latent_numbers(shape, counter_a, counter_b):
    blocks = math.prod(shape) // 4  # four normals a block
    return 4 * max(0, blocks - abs(counter_a - counter_b))


# --- page 05 ------------------------------------------------------------------------------------------


def _batches():
    """CFG batches of other shapes and scales, and rows that agree almost everywhere."""
    rng = np.random.default_rng(2026)
    rows = []
    for label, shape, scale in (
        ("one number a row, s = 3", (2, 1), 3.0),
        ("[2, 3, 5], s = 12", (2, 3, 5), 12.0),
        ("[2, 4, 16, 16] in the thousands, s = 2.5", (2, 4, 16, 16), 2.5),
        ("[2, 4, 8, 8], rows that differ in one entry only, s = 6", (2, 4, 8, 8), 6.0),
    ):
        batch = rng.normal(size=shape) * (1000.0 if "thousands" in label else 1.0)
        if "one entry" in label:
            batch[1] = batch[0]
            batch[1].reshape(-1)[-1] += 0.5
        rows.append((label, (batch, classifier_free_guidance(batch, scale))))
    return rows


@function(_batches)
def recover_guidance_scale(epsilon_batch, epsilon_guided):
    batch = np.asarray(epsilon_batch, dtype=np.float64)
    difference = (batch[1] - batch[0]).ravel()
    deviation = (np.asarray(epsilon_guided, dtype=np.float64)[0] - batch[0]).ravel()
    s = float(difference @ deviation / (difference @ difference))
    return s, s - 1.0


# --- page 06 ------------------------------------------------------------------------------------------


def _cosine_table() -> np.ndarray:
    """Nichol and Dhariwal's cosine schedule over 1000 steps, ending at ᾱ = 0 (zero terminal SNR)."""
    t = np.arange(1000) / 999
    return np.cos((t + 0.008) / 1.008 * np.pi / 2) ** 2 / np.cos(0.008 / 1.008 * np.pi / 2) ** 2


def _steps():
    """v of no particular (x₀, ε): other shapes, schedules, spacings and a float32 loop-sized latent."""
    rng = np.random.default_rng(99)
    table, cosine, zero = alphas_cumprod(), _cosine_table(), zero_terminal_snr(alphas_cumprod())
    rows = []
    for label, shape, t, prev_t, schedule, dtype in (
        ("cosine schedule, [3], t = 999 (ᾱ = 0) → 500", (3,), 999, 500, cosine, np.float64),
        ("cosine schedule, [2, 5], t = 500 → 0", (2, 5), 500, 0, cosine, np.float64),
        ("leading spacing, [1, 4, 8, 8], t = 750 → 500", (1, 4, 8, 8), 750, 500, table, np.float64),
        ("leading spacing, [1, 4, 8, 8], t = 0 → end", (1, 4, 8, 8), 0, None, table, np.float64),
        ("zero-terminal-SNR, [1, 4, 64, 64] float32, t = 999 → 666", (1, 4, 64, 64), 999, 666, zero, np.float32),
        ("one step of 1000, [4], t = 1 → 0", (4,), 1, 0, table, np.float64),
    ):
        z_t, v = (rng.normal(size=shape).astype(dtype) for _ in range(2))
        rows.append((label, (z_t, v, t, prev_t, schedule)))
    return rows


@function(_steps)
def ddim_v_update(z_t, v, t, prev_t, alpha_bars):
    a, b = math.sqrt(alpha_bars[t]), math.sqrt(1.0 - alpha_bars[t])
    a_prev = 1.0 if prev_t is None else alpha_bars[prev_t]
    z, velocity = np.asarray(z_t, dtype=np.float64), np.asarray(v, dtype=np.float64)
    x0_hat = a * z - b * velocity  # rotate (z_t, v) back to (x̂₀, ε̂)
    epsilon = b * z + a * velocity
    z_prev = math.sqrt(a_prev) * x0_hat + math.sqrt(1.0 - a_prev) * epsilon
    return z_prev.astype(z_t.dtype), x0_hat.astype(z_t.dtype)
