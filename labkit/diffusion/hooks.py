"""Pieces of trace two's runtime that a reader's function may replace (the exercises use it).

A hook is passed to ``run_diffusion(config, DiffusionHooks(...))``; the module
functions are never reassigned.  Each field left at ``None`` keeps the library's piece:

* ``words_to_normals(words)`` — Philox words uint32 [B, 4] → normals [4B] in stream order
  (library: ``normal.blocks_to_normals``); used for the initial latent and any η > 0 noise;
* ``cfg_combine(epsilon_batch, guidance_scale)`` — ε for the CFG batch [2, 4, 64, 64]
  (rows in the book's order: negative, positive) → ε̂ [1, 4, 64, 64]
  (library: ``guidance.classifier_free_guidance``);
* ``scheduler_step(z_t, epsilon, t, prev_t, alpha_bars)`` — one deterministic DDIM step
  (η = 0) at timestep ``t``; ``prev_t`` is the next timestep of the loop or ``None`` after
  the last one; ``alpha_bars`` is the read-only ᾱ table float64 [1000].  Returns
  (z_prev, x̂₀), each of z_t's shape [1, 4, 64, 64] (library: ``ddim.ddim_step`` with
  ᾱ_prev = 1.0 after the last timestep).

What a hook returns is recorded as is (shape and dtype included), so a comparison with
the golden trace shows where it departs; a wrong shape is refused with a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from labkit.core.runtime import Hooks


@dataclass(frozen=True)
class DiffusionHooks(Hooks):
    """Substitutes for pieces of ``run_diffusion``; ``None`` keeps the library's piece."""

    words_to_normals: Callable | None = None
    cfg_combine: Callable | None = None
    scheduler_step: Callable | None = None

    SIGNATURES = {
        "words_to_normals": "a function (words) -> normals",
        "cfg_combine": "a function (epsilon_batch, guidance_scale) -> epsilon_guided",
        "scheduler_step": "a function (z_t, epsilon, t, prev_t, alpha_bars) -> (z_prev, x0_hat)",
    }


def call_scheduler_step(step, latent, epsilon, t, prev_t, table):
    """Call ``hooks.scheduler_step`` and check that it returns (z_prev, x̂₀) of the latent's shape."""
    result = step(latent, epsilon, int(t), None if prev_t is None else int(prev_t), table)
    if not isinstance(result, tuple | list) or len(result) != 2:
        got = type(result).__name__ + (f" of length {len(result)}" if isinstance(result, tuple | list) else "")
        raise ValueError(f"hooks.scheduler_step must return a pair (z_prev, x0_hat), got {got}")
    names = ("z_prev", "x0_hat")
    return tuple(of_latent_shape("scheduler_step", n, a, latent) for n, a in zip(names, result, strict=True))


def of_latent_shape(hook: str, name: str, value, latent: np.ndarray) -> np.ndarray:
    """What ``hooks.<hook>`` returned as ``name``, as an array of the latent's shape (else a ValueError)."""
    array = np.asarray(value)
    if array.shape != latent.shape:
        raise ValueError(
            f"hooks.{hook} must return {name} of the latent's shape {list(latent.shape)}, got {list(array.shape)}"
        )
    return array
