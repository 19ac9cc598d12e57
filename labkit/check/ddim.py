"""Exercise of page 06 (§7.8): the reader's DDIM step on the two-dimensional sub-fixture, then in the
chapter's loop against the golden trace's latent events (d00–d05) and, number by number, the library's arrays.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from labkit.check.core import trace
from labkit.check.grading import CandidateProblem, as_array, call, failure, golden, unpack
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import ddim_step
from labkit.diffusion.config import DiffusionHooks
from labkit.diffusion.pipeline import run_diffusion

_LAST_STEP = "there is no earlier level: ᾱ_prev = 1.0 (final_alpha_bar), so the last step returns z₀ = x̂₀"


@lru_cache(maxsize=1)
def _library_run():
    return run_diffusion(None, decode=False)


class _Step:
    """The reader's step as the loop's ``scheduler_step``: the pair, each of z_t's shape and a float
    dtype; in the chapter's loop each array is compared with the library's (``divergence``)."""

    def __init__(self, candidate):
        self.candidate, self.steps, self.divergence = candidate, 0, None

    def __call__(self, z_t, epsilon, t, prev_t, alpha_bars):
        z_t, epsilon = np.array(z_t, copy=True), np.array(epsilon, copy=True)
        try:
            got = unpack(call(self.candidate, z_t.copy(), epsilon.copy(), t, prev_t, alpha_bars), ("z_prev", "x0_hat"))
        except CandidateProblem as problem:
            if prev_t is None:
                raise CandidateProblem(f"{problem} — at t = {t}, the last step, prev_t is None: {_LAST_STEP}") from None
            raise
        z_prev, x0_hat = (
            as_array(a, n, shape=z_t.shape, dtype_kind="float") for a, n in zip(got, ("z_prev", "x0_hat"), strict=True)
        )
        if z_t.ndim == 4:
            self.steps += 1
            self._compare(t, x0_hat, z_prev)
        return z_prev, x0_hat

    def _compare(self, t, x0_hat, z_prev) -> None:
        library, k = _library_run(), self.steps
        wanted = (("x0_hat", x0_hat, library.x0_hats[k - 1]), ("z_prev", z_prev, library.latents[k][1]))
        for label, got, want in wanted if self.divergence is None else ():
            far = np.argwhere(~np.isclose(np.float64(got), np.float64(want), rtol=0.0, atol=1e-4))
            if far.size:
                index = tuple(int(i) for i in far[0])
                self.divergence = failure(
                    f"{label} differs from the library's beyond 1e-4",
                    where=f"d{1 + k:02d} denoise.updated (step {k}, t = {t}), {label}{list(index)} — the chapter's run",
                    rule="every number within 1e-4",
                    got=float(got[index]),
                    expected=float(want[index]),
                )
                return


def _subfixture():
    """§7.8's two-dimensional sub-fixture, step 2 → 1, then 1 → 0 from the library's z₁."""
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    table = np.array([fx["alpha_bar"][str(t)] for t in range(3)], dtype=np.float64)  # ᾱ indexed by t
    z2, eps2, eps1 = (np.array(fx[k], dtype=np.float64) for k in ("z_2", "epsilon_2", "epsilon_1"))
    z1, _ = _reference(z2, eps2, 2, 1, table)
    return [
        ("§7.8 sub-fixture, step t = 2 → 1", (z2, eps2, 2, 1, table)),
        ("§7.8 sub-fixture, step t = 1 → 0", (z1, eps1, 1, 0, table)),
    ]


def _reference(z_t, epsilon, t, prev_t, alpha_bars):
    return ddim_step(z_t, epsilon, alpha_bars[t], alpha_bars[prev_t])


@trace(hook=_Step, cases=_subfixture, reference=_reference)
def ddim_update():
    def run(step):
        with np.errstate(all="ignore"):
            return run_diffusion(None, hooks=DiffusionHooks(scheduler_step=step), decode=False).events

    return [("the chapter's run vs the golden trace", golden("diffusion.jsonl", 6), run)]
