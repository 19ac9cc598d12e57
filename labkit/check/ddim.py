"""Exercise of page 06 (§7.8): the DDIM step.

The reader's step replaces the scheduler step: first on the §7.8 two-dimensional sub-fixture,
then in the chapter's four-step loop against the golden trace and the library's arrays.
"""

from __future__ import annotations

import numpy as np

from labkit.check import _diffusion as diffusion
from labkit.check._support import close, compare_traces, first_far
from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise, failure, passed

PAGE = "notebooks/07-traces/06-diffusion-ddim-by-hand.md"


_X0_CONCEPT = (
    "x̂₀ undoes the forward noising z_t = √ᾱ_t·x₀ + √(1−ᾱ_t)·ε: solve it for x₀. The amplitudes "
    "are square roots, √ᾱ_t and √(1−ᾱ_t), of the table's ᾱ_t = alpha_bars[t]"
)
_ZPREV_CONCEPT = (
    "With σ = 0, z_prev puts the estimate back at the noise level ᾱ_prev: √ᾱ_prev·x̂₀ plus "
    "√(1−ᾱ_prev)·ε, the same predicted noise; ᾱ_prev = alpha_bars[prev_t], and 1.0 after the "
    "last timestep (prev_t is None)"
)
_LAST_STEP = (
    "after the last timestep (prev_t is None) there is no earlier level: ᾱ_prev = 1.0 "
    "(final_alpha_bar), so the last step returns z₀ = x̂₀"
)


def _ddim_reference(z, eps, a_t, a_prev):
    from labkit.diffusion import ddim_step

    return ddim_step(np.asarray(z, dtype=np.float64), np.asarray(eps, dtype=np.float64), a_t, a_prev)


def _ddim_hint(z, eps, t, prev_t, table, got_z, got_x0, atol: float) -> str:
    """Name the mistake behind a wrong (z_prev, x̂₀), or explain the formula that differs."""
    z, eps = np.asarray(z, dtype=np.float64), np.asarray(eps, dtype=np.float64)
    a_t = float(table[t])
    a_prev = 1.0 if prev_t is None else float(table[prev_t])
    want_z, want_x0 = _ddim_reference(z, eps, a_t, a_prev)
    if close(got_z, want_x0, atol) and close(got_x0, want_z, atol) and not close(want_z, want_x0, atol):
        return "you returned (x̂₀, z_prev): the step returns (z_prev, x̂₀), in that order"
    if not close(got_x0, want_x0, atol):
        if close(got_x0, (z - (1 - a_t) * eps) / a_t, atol):
            return (
                "you used ᾱ_t where √ᾱ_t belongs (and 1−ᾱ_t for √(1−ᾱ_t)): ᾱ is a fraction of the "
                "variance, the sample mixes amplitudes. " + _X0_CONCEPT
            )
        return _X0_CONCEPT
    x0 = want_x0
    if prev_t is None:
        for label, other in (("alpha_bars[0]", float(table[0])), ("alpha_bars[-1]", float(table[-1]))):
            if close(got_z, np.sqrt(other) * x0 + np.sqrt(1 - other) * eps, atol):
                return f"at the last step you used ᾱ_prev = {label} = {other:.6g}; " + _LAST_STEP
        return _LAST_STEP + ". " + _ZPREV_CONCEPT
    mistakes = (
        ((a_prev * x0 + (1 - a_prev) * eps), "you used ᾱ_prev where √ᾱ_prev belongs (and 1−ᾱ_prev for √(1−ᾱ_prev))"),
        (
            (np.sqrt(a_prev) * eps + np.sqrt(1 - a_prev) * x0),
            "you swapped the two parts: the signal part scales x̂₀ and the noise part scales ε",
        ),
        (
            (np.sqrt(a_prev) * eps + np.sqrt(1 - a_prev) * eps),
            "you used ε where x̂₀ belongs: the signal part is √ᾱ_prev·x̂₀",
        ),
        (
            (np.sqrt(a_prev) * z + np.sqrt(1 - a_prev) * eps),
            "you re-noised z_t instead of the estimate: the signal part is √ᾱ_prev·x̂₀, not √ᾱ_prev·z_t",
        ),
        (
            (np.sqrt(a_prev) * x0),
            "you dropped the noise part: deterministic DDIM keeps the predicted noise, "
            "√(1−ᾱ_prev)·ε (only σ·noise is zero)",
        ),
    )
    for value, hint in mistakes:
        if close(got_z, value, atol):
            return hint + ". " + _ZPREV_CONCEPT
    return _ZPREV_CONCEPT


class _Step:
    """The reader's step as the loop's ``scheduler_step``; ``calls`` keeps its inputs and outputs."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[tuple] = []

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
        self.calls.append((z_t, epsilon, t, prev_t, alpha_bars, z_prev, x0_hat))
        return z_prev, x0_hat

    def hint(self, k: int, atol: float = 1e-4) -> str:
        z, eps, t, prev_t, table, got_z, got_x0 = self.calls[k - 1]
        return _ddim_hint(z, eps, t, prev_t, table, got_z, got_x0, atol)

    def trace_hint(self, div) -> str:
        if div.field.endswith("dtype"):
            return diffusion.dtype_hint("z_prev and x̂₀")
        event = div.event_b or div.event_a or {}
        step = event.get("logical_step")
        if event.get("event_type") == "denoise.updated" and isinstance(step, int) and step <= len(self.calls):
            return self.hint(step)
        return _ZPREV_CONCEPT


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
)
def check_ddim_update(candidate) -> CheckResult:
    """one deterministic DDIM step (η = 0, ε-prediction) from timestep t to prev_t (None after the
    last): look up ᾱ in alpha_bars and return (z_prev, x0_hat), each of z_t's shape and dtype"""
    # 1. the §7.8 two-dimensional sub-fixture, step 2 → 1 then 1 → 0
    table, z, steps, tolerance = _subfixture()
    reader = _Step(candidate)
    for k, (t, prev_t, eps) in enumerate(steps, start=1):
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
                    hint=reader.hint(k, tolerance),
                )
        z = got_z
    # 2. the chapter's run: four steps 999 → 749 → 499 → 249 → end, against the golden trace
    case = "the chapter's run vs the golden trace"
    loop = _Step(candidate)
    mine = diffusion.run(scheduler_step=loop)
    failed = compare_traces(case, diffusion.golden(), mine.events, loop.trace_hint)
    if failed is not None:
        return failed
    reference = diffusion.reference(None)
    for k in range(1, len(reference.x0_hats) + 1):  # step by step, in the order the step computes them
        for label, got, want in (
            ("x0_hat", mine.x0_hats[k - 1], reference.x0_hats[k - 1]),
            ("z_prev", mine.latents[k][1], reference.latents[k][1]),
        ):
            failed = diffusion.step_mismatch(case, mine, k, label, got, want, "1e-4", loop.hint)
            if failed is not None:
                return failed
    return passed(
        "the §7.8 sub-fixture (2 → 1 → 0) and all four steps of the chapter's "
        "run reproduce the reference, ending on z₀ = x̂₀"
    )
