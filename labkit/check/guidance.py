"""Exercise of page 05 (§7.7): classifier-free guidance inside the denoise loop.

The reader's combination replaces the loop's ``cfg_combine`` (events d02–d05); the run is
compared with the golden trace and step by step with the library's ε̂, at the chapter's
guidance 5.0 and at 2.0.
"""

from __future__ import annotations

import numpy as np

from labkit.check import _diffusion as diffusion
from labkit.check._support import close, compare_traces
from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise, passed

PAGE = "notebooks/07-traces/05-diffusion-denoising-and-decoding.md"


def _cfg_variants(batch: np.ndarray, scale: float) -> dict[str, tuple[np.ndarray, str]]:
    neg, pos = batch[0:1].astype(np.float64), batch[1:2].astype(np.float64)
    variants = {
        "rows swapped": (
            pos + scale * (neg - pos),
            "your ε̂ is what you get by reading row 0 as the positive branch. The CFG batch is "
            "built negative first (d00's cfg_batch_order is ['negative', 'positive']), so the "
            "network's row 0 is ε_neg and row 1 is ε_pos: guidance starts from ε_neg and moves "
            "w times (ε_pos − ε_neg)",
        ),
        "positive only": (
            pos,
            "your ε̂ is the positive branch alone, which is guidance scale 1; the loop "
            f"passes guidance_scale = {scale:g}: start from ε_neg and move w times (ε_pos − ε_neg)",
        ),
        "negative only": (
            neg,
            "your ε̂ is the negative branch alone, which is guidance scale 0; the loop "
            f"passes guidance_scale = {scale:g}",
        ),
        "started from the positive branch": (
            pos + scale * (pos - neg),
            "your ε̂ starts from ε_pos; guidance starts from the negative (unconditional) prediction "
            "ε_neg, so that w = 1 gives exactly ε_pos and w = 0 exactly ε_neg",
        ),
        "difference only": (
            scale * (pos - neg),
            "w·(ε_pos − ε_neg) is only the guidance direction: ε̂ starts from the negative prediction ε_neg and adds it",
        ),
    }
    if scale != 5.0:
        variants["scale fixed at 5"] = (
            neg + 5.0 * (pos - neg),
            f"your ε̂ uses the scale 5.0 of §7.6, but this run passes guidance_scale = "
            f"{scale:g}: use the argument, never a constant",
        )
    return variants


_CFG_CONCEPT = (
    "ε̂ = ε_neg + w · (ε_pos − ε_neg), with ε_neg = row 0 and ε_pos = row 1 of the batch "
    "(d00's cfg_batch_order) and w the guidance_scale you are given; the result has the latent's "
    "shape [1, 4, 64, 64]"
)


class _Guidance:
    """The reader's combination as the loop's ``cfg_combine``; ``calls`` keeps (batch, scale, ε̂)."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[tuple[np.ndarray, float, np.ndarray]] = []

    def __call__(self, epsilon_batch, guidance_scale):
        batch = np.array(epsilon_batch, copy=True)
        got = call(self.candidate, batch.copy(), guidance_scale)
        shape = (1, *batch.shape[1:])
        array = as_array(got, "the returned ε̂", dtype_kind="float")
        if array.shape != shape:
            raise CandidateProblem(
                f"ε̂ must have the latent's shape {list(shape)} (keep the batch axis of "
                f"size 1), got {list(array.shape)}; the batch you get is {list(batch.shape)}"
            )
        self.calls.append((batch, float(guidance_scale), array))
        return array

    def diagnose(self, step: int) -> str | None:
        if not 1 <= step <= len(self.calls):
            return None
        batch, scale, got = self.calls[step - 1]
        for _name, (variant, hint) in _cfg_variants(batch, scale).items():
            if close(got, variant, 1e-4):
                return hint
        return None

    def hint(self, div) -> str:
        if div.field.endswith("dtype"):
            return diffusion.dtype_hint("ε̂")
        event = div.event_b or div.event_a or {}
        step = event.get("logical_step")
        if event.get("event_type") == "denoise.updated" and isinstance(step, int):
            return self.diagnose(step) or _CFG_CONCEPT
        return _CFG_CONCEPT


def _compare_steps(case: str, run, reference, attribute: str, tolerance: str, hint_for) -> CheckResult | None:
    """The whole arrays ``run.<attribute>[k]`` against the reference, step by step."""
    for k, (got, want) in enumerate(zip(getattr(run, attribute), getattr(reference, attribute), strict=True), start=1):
        failed = diffusion.step_mismatch(case, run, k, attribute, got, want, tolerance, hint_for)
        if failed is not None:
            return failed
    return None


@exercise("cfg_combine", page=PAGE, signature=("epsilon_batch", "guidance_scale"))
def check_cfg_combine(candidate) -> CheckResult:
    """split the network's output for the CFG batch [2, 4, 64, 64] (rows: negative, positive) and
    return the guided noise ε̂ [1, 4, 64, 64] for the given guidance_scale"""
    from labkit.diffusion.pipeline import DiffusionConfig

    cases = [
        ("the chapter's run (guidance 5.0) vs the golden trace", None, diffusion.golden),
        ("the same run with guidance_scale = 2.0 vs the library's run", DiffusionConfig(guidance_scale=2.0), None),
    ]
    for case, config, expected in cases:
        reader = _Guidance(candidate)
        mine = diffusion.run(config, cfg_combine=reader)
        reference = diffusion.reference(config)
        failed = compare_traces(case, expected() if expected else reference.events, mine.events, reader.hint)
        if failed is not None:
            return failed
        failed = _compare_steps(
            case,
            mine,
            reference,
            "epsilon_guided",
            "1e-05",
            lambda k, reader=reader: reader.diagnose(k) or _CFG_CONCEPT,
        )
        if failed is not None:
            return failed
    return passed(
        "all four denoise steps reproduce the golden trace (d00–d05), and a run "
        "with guidance 2.0 matches the library's too"
    )
