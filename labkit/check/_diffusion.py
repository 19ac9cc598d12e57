"""The diffusion runs the trace-two exercises plug their pieces into (pages 04–06)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from labkit.check import _support as support
from labkit.check.core import failure

#: the diffusion exercises compare the latent-level part of the trace, d00–d05 (condition,
#: initial latent, four denoise steps), under the trace's tolerance.  Pixels and PNG bytes
#: (d06–d08) are compared exactly, and a correct answer that rounds its last float bit
#: differently would change them without being wrong.
LATENT_EVENTS = 6


def golden() -> list[dict]:
    return support.golden("diffusion.jsonl", LATENT_EVENTS)


@lru_cache(maxsize=4)
def reference(config=None):
    """The library's run of ``config`` (default §7.6) up to z₀, computed once per configuration."""
    from labkit.diffusion.pipeline import run_diffusion

    return run_diffusion(config, decode=False)


def run(config=None, **hooks):
    """The run with the reader's pieces as ``DiffusionHooks`` (a wrong answer is judged, not warned about)."""
    from labkit.diffusion.hooks import DiffusionHooks
    from labkit.diffusion.pipeline import run_diffusion

    with np.errstate(all="ignore"):
        return run_diffusion(config, keep_previews=True, hooks=DiffusionHooks(**hooks), decode=False)


def step_mismatch(case: str, mine, k: int, label: str, got, want, tolerance: str):
    """A failure at the first number of step ``k``'s ``label`` (the reader's run ``mine``) farther
    than ``tolerance`` (as written, e.g. ``"1e-4"``) from the library's; or None."""
    got, want = np.asarray(got), np.asarray(want)
    index = support.first_far(got, want, float(tolerance))
    if index is None:
        return None
    event = mine.events[1 + k]
    return failure(
        f"{label} differs from the library's beyond {tolerance}",
        where=f"{event['event_id']} denoise.updated (step {k}, t = {event['payload']['timestep']}), "
        f"{label}{list(index)} — {case}",
        rule=f"every number within {tolerance}",
        got=float(got[index]),
        expected=float(want[index]),
    )
