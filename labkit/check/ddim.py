"""Exercise of page 06 (§7.8): the DDIM step.

The reader's step replaces the scheduler step: first on the §7.8 two-dimensional sub-fixture,
then in the chapter's four-step loop against the golden trace and the library's arrays.
"""

from __future__ import annotations

import numpy as np

from labkit.check import _diffusion as diffusion
from labkit.check._support import compare_traces, first_far
from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise, failure, passed

PAGE = "notebooks/07-traces/06-diffusion-ddim-by-hand.md"


_LAST_STEP = (
    "after the last timestep (prev_t is None) there is no earlier level: ᾱ_prev = 1.0 "
    "(final_alpha_bar), so the last step returns z₀ = x̂₀"
)


def _ddim_reference(z, eps, a_t, a_prev):
    from labkit.diffusion import ddim_step

    return ddim_step(np.asarray(z, dtype=np.float64), np.asarray(eps, dtype=np.float64), a_t, a_prev)


class _Step:
    """The reader's step as the loop's ``scheduler_step``: it must return the pair, each of z_t's shape."""

    def __init__(self, candidate):
        self.candidate = candidate

    def __call__(self, z_t, epsilon, t, prev_t, alpha_bars):
        z_t, epsilon = np.array(z_t, copy=True), np.array(epsilon, copy=True)
        try:
            got = call(self.candidate, z_t.copy(), epsilon.copy(), t, prev_t, alpha_bars)
        except CandidateProblem as problem:
            if prev_t is None:
                raise CandidateProblem(f"{problem} — at t = {t}, the last step, prev_t is None: {_LAST_STEP}") from None
            raise
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CandidateProblem(
                f"return the pair (z_prev, x0_hat), got {type(got).__name__}"
                + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else "")
            )
        z_prev = as_array(got[0], "z_prev", shape=z_t.shape, dtype_kind="float")
        x0_hat = as_array(got[1], "x0_hat", shape=z_t.shape, dtype_kind="float")
        return z_prev, x0_hat


def _subfixture():
    from labkit.core.fixtures import fixture_path, read_json

    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    a = fx["alpha_bar"]
    table = np.array([a["0"], a["1"], a["2"]], dtype=np.float64)  # ᾱ indexed by t = 0, 1, 2
    table.flags.writeable = False
    z2, eps2, eps1 = (np.array(fx[k], dtype=np.float64) for k in ("z_2", "epsilon_2", "epsilon_1"))
    return table, z2, [(2, 1, eps2), (1, 0, eps1)], float(fx["tolerance"])


@exercise(
    "ddim_update",
    page=PAGE,
    signature=("z_t", "epsilon", "t", "prev_t", "alpha_bars"),
    kind="extend",
    idea="a DDIM step first estimates the clean latent, then re-noises it to the previous timestep's noise level",
    rule="the table holds variances: the sample mixes their square roots; the estimate, not z_t, is re-noised, "
    "with the same predicted noise; after the last timestep there is no earlier level; the latent stays float32",
)
def check_ddim_update(candidate) -> CheckResult:
    """one deterministic DDIM step (η = 0, ε-prediction) from timestep t to prev_t (None after the
    last): look up ᾱ in alpha_bars and return (z_prev, x0_hat), each of z_t's shape and dtype"""
    # 1. the §7.8 two-dimensional sub-fixture, step 2 → 1 then 1 → 0
    table, z, steps, tolerance = _subfixture()
    reader = _Step(candidate)
    for t, prev_t, eps in steps:
        got_z, got_x0 = reader(z, eps, t, prev_t, table)
        want_z, want_x0 = _ddim_reference(z, eps, table[t], table[prev_t])
        for label, got, want in (("x0_hat", got_x0, want_x0), ("z_prev", got_z, want_z)):
            index = first_far(got, want, tolerance)
            if index is not None:
                return failure(
                    "the §7.8 sub-fixture is not reproduced",
                    where=f"§7.8 sub-fixture, step t = {t} → {prev_t}: {label}{list(index)}",
                    rule=f"within the sub-fixture's tolerance {tolerance:g}",
                    got=float(got[index]),
                    expected=float(want[index]),
                )
        z = got_z
    # 2. the chapter's run: four steps 999 → 749 → 499 → 249 → end, against the golden trace
    case = "the chapter's run vs the golden trace"
    loop = _Step(candidate)
    mine = diffusion.run(scheduler_step=loop)
    failed = compare_traces(case, diffusion.golden(), mine.events)
    if failed is not None:
        return failed
    reference = diffusion.reference(None)
    for k in range(1, len(reference.x0_hats) + 1):  # step by step, in the order the step computes them
        for label, got, want in (
            ("x0_hat", mine.x0_hats[k - 1], reference.x0_hats[k - 1]),
            ("z_prev", mine.latents[k][1], reference.latents[k][1]),
        ):
            failed = diffusion.step_mismatch(case, mine, k, label, got, want, "1e-4")
            if failed is not None:
                return failed
    return passed(
        "the §7.8 sub-fixture (2 → 1 → 0) and all four steps of the chapter's "
        "run reproduce the reference, ending on z₀ = x̂₀"
    )
