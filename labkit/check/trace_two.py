"""Trace two's exercises (pages 04–06, §7.6–7.8), checked against the mechanism itself, never a stored
answer: a count against two real Philox draws, a guidance scale against the one the check guided with, a
v-prediction step on pairs the check noised itself, on §7.8's numbers and inside trace two's loop.
"""

import re
from functools import lru_cache

import numpy as np

from labkit.check.core import attach, properties, value
from labkit.check.feedback import say
from labkit.check.grading import (
    CandidateProblem,
    NotAttempted,
    as_array,
    call,
    compare_cases,
    compare_traces,
    failure,
    unpack,
)
from labkit.core.events import read_golden
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion.config import DiffusionConfig, DiffusionHooks
from labkit.diffusion.ddim import alphas_cumprod, ddim_step
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import PhiloxNormalStream
from labkit.diffusion.pipeline import load_models, run_diffusion

# --- page 04 ------------------------------------------------------------------------------------------

#: (shape, counter_a, counter_b): the trace's latent with the fault's offset and a partial one, small
#: latents at the edges (equal counters, windows that just touch, just miss), a batch of two
SHARED_CASES = (
    ((1, 4, 64, 64), 0, 4096),
    ((1, 4, 64, 64), 0, 1000),
    ((1, 4, 64, 64), 1000, 0),
    ((1, 4, 8, 8), 5, 5),
    ((1, 4, 8, 8), 0, 63),
    ((1, 4, 8, 8), 0, 64),
    ((1, 4, 8, 8), 90, 0),
    ((2, 4, 6, 10), 7, 100),
)


def _drawn(shape, counter: int) -> np.ndarray:
    """The normals of a latent of ``shape`` drawn with trace two's seed from block ``counter``."""
    return PhiloxNormalStream(DiffusionConfig().seed, counter).normals(int(np.prod(shape))).values


@lru_cache(maxsize=1)
def _shared_rows() -> tuple:
    """(label, (shape, a, b), how many numbers the two real draws have in common)."""
    rows = []
    for shape, a, b in SHARED_CASES:
        common = np.intersect1d(_drawn(shape, a), _drawn(shape, b)).size
        rows.append((f"shape {list(shape)}, counters {a} and {b}", (shape, a, b), common))
    return tuple(rows)


@properties()
def shared_latent_numbers(count):
    """The reader's count equals the numbers two real draws have in common."""
    found = compare_cases(count, _shared_rows(), None, atol=0.0)
    return None if found.passed else found


@properties()
def counter_offset_first_event(answer):
    """An event ID of trace two (d00 … d08), not an event type or a tensor's name."""
    if isinstance(answer, str) and not re.fullmatch(r"d0[0-8]", " ".join(answer.split()).casefold()):
        return _not_a_form(answer, say("answer with an event ID of trace two"), say("an ID from d00 to d08"))
    return None


def _not_a_form(answer: str, message: str, rule: str):
    """A word that is not an answer of the asked form (an event ID, a branch): said at "your value"."""
    return failure(message, where=say("your value"), rule=rule, got=answer)


# --- page 05 ------------------------------------------------------------------------------------------

#: (label, guidance scale, entries where the two rows agree)
GUIDED = (
    ("s = 5, the trace's scale", 5.0, 0),
    ("s = 0: the negative row alone", 0.0, 0),
    ("s = 1", 1.0, 0),
    ("s = 0.3", 0.3, 0),
    ("s = 7.5, rows that agree on their first 16 entries", 7.5, 16),
)


@lru_cache(maxsize=1)
def _guided_cases() -> tuple:
    """(label, (batch, ε̂), (s, w)) on seeded float64 batches [2, 4, 8, 8]: the check guides them itself."""
    rng = np.random.default_rng(7)
    rows = []
    for label, scale, agree in GUIDED:
        batch = rng.normal(size=(2, 4, 8, 8))
        batch[1].reshape(-1)[:agree] = batch[0].reshape(-1)[:agree]
        rows.append((label, (batch, classifier_free_guidance(batch, scale)), (scale, scale - 1.0)))
    return tuple(rows)  # compare_cases hands the reader a deep copy of each case


@lru_cache(maxsize=1)
def _trace_step_one() -> tuple:
    """Step 1 of trace two: the CFG batch (float32, recomputed as page 05 does) and the run's own ε̂."""
    run, denoiser = _library_run(), load_models()[1]
    z = run.latents[0][1]
    batch = denoiser(np.concatenate([z, z]), np.array([999, 999]), run.condition_batch)
    return batch, run.epsilon_guided[0]


@properties()
def recover_guidance_scale(scales):
    """(s, w) equal the scale the check guided with, on float64 batches and on the trace's float32 step."""
    scale = DiffusionConfig().guidance_scale
    step_one = ("the trace's step 1 (float32)", _trace_step_one(), (scale, scale - 1))
    for rows, atol in ((list(_guided_cases()), 1e-6), ([step_one], 1e-4)):
        found = compare_cases(scales, rows, None, atol=atol, outputs=("s", "w"), first="s")
        if not found.passed:
            return found
    return None


@value
def cfg_scale_one() -> str:
    eps = np.random.default_rng(5).normal(size=(2, 4, 8, 8))
    guided = classifier_free_guidance(eps, 1.0)
    row = next(i for i in range(2) if np.allclose(guided[0], eps[i]))
    return "conditional" if DiffusionConfig().cfg_order[row] == "positive" else "unconditional"


#: the words that name each branch (the page calls them conditional/positive and unconditional/negative)
BRANCHES = {
    "conditional": {"conditional", "positive", "cond", "c", "ε_c", "ε_pos", "eps_pos", "epsilon_pos", "c_pos"},
    "unconditional": {"unconditional", "negative", "uncond", "u", "ε_u", "ε_neg", "eps_neg", "epsilon_neg", "c_neg"},
}


def _branch(word: str) -> str | None:
    plain = word.removesuffix(" prediction").removesuffix(" branch").removeprefix("the ").strip(" '\".")
    return next((name for name, words in BRANCHES.items() if plain in words), None)


def _same_branch(word: str, expected: str) -> str | None:
    return None if _branch(word) == expected else say("another branch")


def _one_branch(answer):
    """A word that names one of the two predictions (not 'both', not a number in words)."""
    if isinstance(answer, str) and _branch(" ".join(answer.split()).casefold()) is None:
        return _not_a_form(answer, say("name one of the two predictions"), say("conditional or unconditional"))
    return None


attach("cfg_scale_one", properties=_one_branch, agree=_same_branch)


# --- page 06 ------------------------------------------------------------------------------------------

#: what the v-step returns, in that order
V_OUTPUTS = ("z_prev", "x0_hat")
_LAST_STEP = "there is no earlier level: ᾱ_prev = 1.0 (final_alpha_bar), so the last step returns z₀ = x̂₀"


def zero_terminal_snr(table: np.ndarray) -> np.ndarray:
    """ᾱ rescaled so that √ᾱ falls to exactly 0 at the last timestep and keeps its first value
    (Lin et al. 2024, Algorithm 1): pure noise at t = 999."""
    root = np.sqrt(table)
    first, last = root[0], root[-1]
    return ((root - last) * first / (first - last)) ** 2


def _pairs():
    """(label, table, t, prev_t, shape, dtype, atol) on which the true (x₀, ε) must come back."""
    sub = np.array([1.0, 0.64, 0.25])
    table, zero = alphas_cumprod(), zero_terminal_snr(alphas_cumprod())
    return [
        ("§7.8 table, t = 2 → 1", sub, 2, 1, (2,), np.float64, 1e-6),
        ("§7.8 table, t = 1 → 0", sub, 1, 0, (2,), np.float64, 1e-6),
        ("training table, t = 999 → 749", table, 999, 749, (1, 4, 8, 8), np.float64, 1e-6),
        ("training table, t = 249 → end (prev_t None)", table, 249, None, (1, 4, 8, 8), np.float64, 1e-6),
        ("zero-terminal-SNR table, t = 999 (ᾱ = 0) → 749", zero, 999, 749, (1, 4, 8, 8), np.float64, 1e-6),
        ("training table in float32, t = 749 → 499", table, 749, 499, (1, 4, 8, 8), np.float32, 1e-5),
    ]


def _noised_cases() -> list:
    """Noise a known x₀ with a known ε at level t; the step must return that x₀ and the same pair
    re-mixed at prev_t: (label, (z_t, v, t, prev_t, table), (z_prev, x̂₀))."""
    rng, rows = np.random.default_rng(11), []
    for label, table, t, prev_t, shape, dtype, _ in _pairs():
        x0, eps = rng.normal(size=shape), rng.normal(size=shape)
        a, a_prev = table[t], 1.0 if prev_t is None else table[prev_t]
        z_t = np.sqrt(a) * x0 + np.sqrt(1 - a) * eps  # the forward marginal
        v = np.sqrt(a) * eps - np.sqrt(1 - a) * x0  # what a v-prediction network is trained to give
        z_prev = np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps
        rows.append((label, (z_t.astype(dtype), v.astype(dtype), t, prev_t, table), (z_prev, x0)))
    return rows


def _chapter_cases() -> list:
    """§7.8's sub-fixture with each ε turned into the v of the same (z_t, x̂₀); the printed numbers."""
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    table = np.array([fx["alpha_bar"][str(t)] for t in range(3)])
    says = {k: np.array(v) for k, v in fx["source_says"].items()}
    z2, eps2, eps1 = (np.array(fx[k], dtype=np.float64) for k in ("z_2", "epsilon_2", "epsilon_1"))
    v2 = np.sqrt(0.25) * eps2 - np.sqrt(0.75) * says["x0_hat_2"]
    v1 = np.sqrt(0.64) * eps1 - np.sqrt(0.36) * says["x0_hat_1"]
    return [
        ("§7.8 sub-fixture as v, step 2 → 1", (z2, v2, 2, 1, table), (says["z_1"], says["x0_hat_2"])),
        ("§7.8 sub-fixture as v, step 1 → 0", (says["z_1"], v1, 1, 0, table), (says["x0_hat_1"], says["x0_hat_1"])),
    ]


def _dtype(step) -> object:
    """A float32 z_t and v must come back float32 (the latent's dtype)."""
    z = np.ones((1, 4, 2, 2), dtype=np.float32)
    for name, got in zip(V_OUTPUTS, unpack(call(step, z, z, 749, 499, alphas_cumprod()), V_OUTPUTS), strict=True):
        dtype = getattr(got, "dtype", type(got))
        if dtype != np.float32:
            where, rule = say("float32 latent, {name}.dtype", name=name), say("float32")
            return failure(say("{name} must keep z_t's dtype", name=name), where=where, rule=rule, got=str(dtype))
    return None


@lru_cache(maxsize=1)
def _library_run():
    return run_diffusion(None, decode=False)


class VStep:
    """The reader's v-step as the loop's ``scheduler_step``, fed the v of the loop's z_t and ε (v = √ᾱ_t·ε −
    √(1−ᾱ_t)·x̂₀, in z_t's dtype like a network's output); ``divergence``: the first array off the library's run."""

    def __init__(self, candidate):
        self.candidate, self.steps, self.divergence = candidate, 0, None

    def __call__(self, z_t, epsilon, t, prev_t, alpha_bars):
        a = float(alpha_bars[t])
        z, eps = np.float64(z_t), np.float64(epsilon)
        v = np.sqrt(a) * eps - np.sqrt(1 - a) * (z - np.sqrt(1 - a) * eps) / np.sqrt(a)
        try:
            got = unpack(call(self.candidate, z_t.copy(), v.astype(z_t.dtype), t, prev_t, alpha_bars), V_OUTPUTS)
        except CandidateProblem as problem:
            if prev_t is None:
                fields = {"problem": problem, "t": t, "LAST_STEP": say(_LAST_STEP)}
                text = say("{problem} — at t = {t}, the last step, prev_t is None: {LAST_STEP}", **fields)
                raise CandidateProblem(text) from None
            raise
        z_prev, x0_hat = (
            as_array(a, n, shape=z_t.shape, dtype_kind="float") for a, n in zip(got, V_OUTPUTS, strict=True)
        )
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
                fields = {"value": 1 + k, "k": k, "t": t, "label": label, "index": list(index)}
                text = "d{value:02d} denoise.updated (step {k}, t = {t}), {label}{index} — the chapter's run"
                message = say("{label} differs from the library's beyond 1e-4", label=label)
                rule, where = say("every number within 1e-4"), say(text, **fields)
                self.divergence = failure(message, where=where, rule=rule, got=float(got[index]))
                return


def _in_the_loop(candidate):
    """Trace two with the reader's step (fed v) as its scheduler: events d00–d05 against the golden trace,
    then every number of x̂₀ and z_prev against the library's run."""
    step = VStep(candidate)
    with np.errstate(all="ignore"):
        events = run_diffusion(None, hooks=DiffusionHooks(scheduler_step=step), decode=False).events
    diverged = compare_traces("trace two with your v-step", read_golden("diffusion.jsonl")[:6], events)
    return step.divergence if diverged is None else diverged  # a failed CheckResult is falsy: no `or`


@properties()
def ddim_v_update(step):
    """The true (x₀, ε) come back and re-mix; §7.8's numbers; z_t's dtype; the real loop."""
    outputs = {"outputs": V_OUTPUTS, "first": "x0_hat"}
    noised = _noised_cases()
    for (*_, atol), row in zip(_pairs(), noised, strict=True):
        try:
            found = compare_cases(step, [row], None, atol=atol, **outputs)
        except NotAttempted:
            raise
        except CandidateProblem as problem:
            if row[1][3] is not None:
                raise
            fields = {"problem": problem, "row": row[0], "LAST_STEP": say(_LAST_STEP)}
            raise CandidateProblem(say("{problem} — at “{row}”, the last step: {LAST_STEP}", **fields)) from None
        if not found.passed:
            return found
    found = compare_cases(step, _chapter_cases(), None, atol=1e-6, **outputs)
    if not found.passed:
        return found
    found = _dtype(step)
    return _in_the_loop(step) if found is None else found


@value
def x0_fed_as_epsilon() -> list[float]:
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    z_prev, _ = ddim_step(np.array(fx["z_2"]), np.array([1.0, -1.0]), fx["alpha_bar"]["2"], fx["alpha_bar"]["1"])
    return [float(v) for v in np.ravel(z_prev)]
