"""Pieces of trace two's runtime that a reader's function may replace (the exercises use it).

A hook is passed to ``run_diffusion(config, hooks=DiffusionHooks(...))``; the module
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
from dataclasses import dataclass, fields

_SIGNATURES = {
    "words_to_normals": "(words) -> normals",
    "cfg_combine": "(epsilon_batch, guidance_scale) -> epsilon_guided",
    "scheduler_step": "(z_t, epsilon, t, prev_t, alpha_bars) -> (z_prev, x0_hat)",
}


@dataclass(frozen=True)
class DiffusionHooks:
    """Substitutes for pieces of ``run_diffusion``; ``None`` keeps the library's piece."""

    words_to_normals: Callable | None = None
    cfg_combine: Callable | None = None
    scheduler_step: Callable | None = None

    def __post_init__(self):
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and not callable(value):
                raise ValueError(f"hooks.{item.name} must be a function {_SIGNATURES[item.name]} or None, "
                                 f"got {type(value).__name__}")

    @property
    def active(self) -> list[str]:
        """Names of the substituted pieces."""
        return [item.name for item in fields(self) if getattr(self, item.name) is not None]
