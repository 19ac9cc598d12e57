"""Exercises of trace two (§7.6–7.8): the reader's piece runs inside the real diffusion runtime.

* ``words_to_normals`` (page 04) replaces the word → normal transform of the Philox stream,
  so it builds the initial latent z₉₉₉ of event d01;
* ``cfg_combine`` (page 05) replaces the classifier-free-guidance combination inside the
  denoise loop (events d02–d05);
* ``ddim_update`` (page 06) replaces the scheduler step: first on the §7.8 two-dimensional
  sub-fixture, then in the loop.

Each run is passed to ``run_diffusion`` through ``labkit.diffusion.hooks.DiffusionHooks``
and its events are compared with the golden trace (or the library's run of another
configuration) by ``labkit.trace.divergence.first_divergence``; the first divergent event — ID,
type, rule, field, the reader's value and the expected one — is reported with a hint about
the idea that event tests.  Because a trace summarises tensors, the whole arrays are
compared afterwards too.  Hints come from recognising the usual mistakes (sine before
cosine, the CFG rows read the wrong way round, ᾱ where √ᾱ belongs, …).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise

PAGE_NOISE = "notebooks/07-traces/04-diffusion-conditions-and-noise.md"
PAGE_DENOISE = "notebooks/07-traces/05-diffusion-denoising-and-decoding.md"
PAGE_DDIM = "notebooks/07-traces/06-diffusion-ddim-by-hand.md"


# -- shared: run, compare, report -------------------------------------------------------------

#: the exercises compare the latent-level part of the trace, d00–d05 (condition, initial
#: latent, four denoise steps), under the trace's tolerance.  Pixels and PNG bytes (d06–d08)
#: are compared exactly, and a correct answer that rounds its last float bit differently
#: would change them without being wrong.
_LATENT_EVENTS = 6


def _golden() -> list[dict]:
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    return read_jsonl(fixture_path("traces", "diffusion.jsonl"))[:_LATENT_EVENTS]


@lru_cache(maxsize=4)
def _reference(config=None):
    """The library's run of ``config`` (default §7.6) up to z₀, computed once per configuration."""
    from labkit.diffusion import run_diffusion

    return run_diffusion(config, decode=False)


def _run(config=None, **hooks):
    from labkit.diffusion import run_diffusion
    from labkit.diffusion.hooks import DiffusionHooks

    with np.errstate(all="ignore"):  # a wrong answer is judged, not warned about
        return run_diffusion(config, keep_previews=True, hooks=DiffusionHooks(**hooks), decode=False)


def _quiet_call(candidate, *args):
    with np.errstate(all="ignore"):
        return call(candidate, *args)


def _event_where(event: dict, field: str, case: str) -> str:
    step = event.get("logical_step")
    at = f" (step {step})" if step is not None else ""
    return f"{event['event_id']} {event['event_type']}{at}, field {field} — {case}"


def _compare(name: str, case: str, expected: list[dict], got: list[dict], hint_for) -> CheckResult | None:
    """None when the traces agree; otherwise the first divergence as a failed CheckResult."""
    from labkit.trace.divergence import first_divergence

    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    return CheckResult(name, False, "your run diverges from the reference run",
                       where=_event_where(event, div.field, case), rule=div.rule,
                       got=div.value_b, expected=div.value_a, hint=hint_for(div))


def _first_far(got: np.ndarray, expected: np.ndarray, atol: float) -> tuple[int, ...] | None:
    bad = np.argwhere(~np.isclose(got.astype(np.float64), expected.astype(np.float64), rtol=0.0, atol=atol))
    return None if bad.size == 0 else tuple(int(i) for i in bad[0])


def _close(a, b, atol: float) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and np.allclose(a, b, rtol=0.0, atol=atol)


def _dtype_hint(what: str) -> str:
    return (f"the latent stays float32 all the way: {what} must keep the dtype of the arrays you were given "
            "(compute in float64 if you like, then cast back with .astype(...))")


# -- §7.6: Philox words → standard normals (page 04) ----------------------------------------------

_NORMALS_CONCEPT = ("the stream maps each block's four words to four normals, block after block: every "
                    "word becomes a uniform strictly inside (0, 1), then Box–Muller turns (u(x₀), u(x₁)) into "
                    "(r·cos θ, r·sin θ) and (u(x₂), u(x₃)) into two more, with r = √(−2 ln u₁), θ = 2π u₂")

#: block 0 holds the extreme words 0 and 2³²−1 in every role; block 1 a few ordinary ones
_EXTREME_WORDS = np.array([[0x00000000, 0x00000000, 0xFFFFFFFF, 0xFFFFFFFF],
                           [0xFFFFFFFF, 0x00000000, 0x00000000, 0xFFFFFFFF],
                           [0x80000000, 0x40000000, 0x00000001, 0xFFFFFFFE]], dtype=np.uint32)


def _normals_variants() -> dict[str, tuple[Callable, str]]:
    """Usual mistakes, each as a transform of words [B, 4] and the hint that names it."""
    from labkit.diffusion.normal import box_muller, uint32_to_uniform

    def cos_sin(words, swap_trig=False, pairs=((0, 1), (2, 3)), swap_roles=False, by_block=True):
        u = uint32_to_uniform(words)
        out = []
        for first, second in pairs:
            u1, u2 = (u[:, second], u[:, first]) if swap_roles else (u[:, first], u[:, second])
            c, s = box_muller(u1, u2)
            out += [s, c] if swap_trig else [c, s]
        return np.stack(out, axis=1 if by_block else 0).reshape(-1)

    return {
        "sine first": (lambda w: cos_sin(w, swap_trig=True),
                       "each pair gives the cosine normal first and the sine normal second: "
                       "(r·cos θ, r·sin θ)"),
        "pairs across the block": (lambda w: cos_sin(w, pairs=((0, 2), (1, 3))),
                                   "a pair is two neighbouring words of one block: (x₀, x₁) and (x₂, x₃), "
                                   "not (x₀, x₂) and (x₁, x₃)"),
        "radius from the second uniform": (lambda w: cos_sin(w, swap_roles=True),
                                           "the radius comes from the first uniform of the pair, "
                                           "r = √(−2 ln u₁), and the angle from the second, θ = 2π u₂"),
        "grouped by position": (lambda w: cos_sin(w, by_block=False),
                                "stream order is block by block: block b yields normals 4b, 4b+1, 4b+2, 4b+3; "
                                "you grouped the first normal of every block, then the second, …"),
    }


def _diagnose_normals(words: np.ndarray, normals: np.ndarray) -> str | None:
    for _name, (variant, hint) in _normals_variants().items():
        with np.errstate(all="ignore"):
            if _close(normals, variant(words), 1e-9):
                return hint
    return None


def _pair_words(words: np.ndarray, i: int) -> np.ndarray:
    """The two words normal ``i`` of the stream comes from: (x₀, x₁) or (x₂, x₃) of its block."""
    first = (i % 4) // 2 * 2
    return words[i // 4, first:first + 2]


def _hex(words) -> str:
    return ", ".join(f"0x{int(w):08x}" for w in words)


def _non_finite_hint(words: np.ndarray, i: int) -> str:
    pair = _pair_words(words, i)
    if int(pair[0]) == 0:
        return ("word 0x00000000 did not become a uniform strictly inside (0, 1): ln u is −∞ at u = 0 (and NaN "
                "below). Word x stands for the cell [x, x + 1) of 2³² equal cells of (0, 1); its uniform is the "
                "cell's centre, never 0 and never 1")
    return ("a normal is not finite: ln u is finite only for u strictly inside (0, 1) — check the uniform "
            f"of the word pair {_hex(pair)}")


class _Transform:
    """The reader's transform as the stream's ``to_normals``; ``calls`` keeps (words, normals).

    Inside the run a non-finite normal stops the check at once; with ``finite=False`` it is
    returned, so the caller can report it as a divergence."""

    def __init__(self, candidate, finite: bool = True):
        self.candidate = candidate
        self.finite = finite
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []

    def __call__(self, words):
        words = np.array(words, dtype=np.uint32)
        got = _quiet_call(self.candidate, words.copy())
        count = 4 * words.shape[0]
        try:
            array = np.asarray(got)
        except Exception:
            raise CandidateProblem(f"the returned normals must be array-like, got {type(got).__name__}") from None
        if array.dtype == object or array.dtype.kind not in "fiu":
            raise CandidateProblem(f"the returned normals must be numbers, got {type(got).__name__}")
        if array.shape != (count,):
            raise CandidateProblem(f"{words.shape[0]} blocks of 4 words must give {count} normals, shape [{count}] "
                                   f"in stream order; got shape {list(array.shape)}")
        if array.dtype.kind != "f":
            raise CandidateProblem(f"the returned normals must be floating-point, got dtype {array.dtype}")
        bad = np.argwhere(~np.isfinite(array))
        if bad.size and self.finite:
            i = int(bad[0][0])
            raise CandidateProblem(f"normal {i} (block {i // 4}, from the word pair {_hex(_pair_words(words, i))}) "
                                   f"is {array[i]}: " + _non_finite_hint(words, i))
        self.calls.append((words, array))
        return array


def _normals_hint(reader: _Transform):
    def hint_for(div) -> str:
        if reader.calls:
            found = _diagnose_normals(*reader.calls[0])
            if found:
                return found
        return _NORMALS_CONCEPT
    return hint_for


@exercise(
    "words_to_normals",
    page=PAGE_NOISE,
    signature=("words",),
    task="turn Philox words uint32 [B, 4] into 4B standard normals (float, shape [4B]) in stream order: "
         "each word to a uniform strictly inside (0, 1), then Box–Muller on (x₀, x₁) and (x₂, x₃)",
)
def check_words_to_normals(candidate) -> CheckResult:
    from labkit.diffusion.normal import blocks_to_normals

    name = "words_to_normals"
    reader = _Transform(candidate)
    # 1. the initial latent of the chapter's run, against the golden trace (event d01)
    mine = _run(words_to_normals=reader)
    failed = _compare(name, "the chapter's run vs the golden trace", _golden(), mine.events, _normals_hint(reader))
    if failed is not None:
        return failed
    # 2. the trace summarises z_999; compare all 16384 numbers with the library's latent
    got, want = mine.latents[0][1], _reference(None).latents[0][1]
    size = want.size
    index = _first_far(got, want, 1e-6)
    if index is not None:
        flat = int(np.ravel_multi_index(index, want.shape))
        hint = _diagnose_normals(*reader.calls[0])
        if hint is None and np.allclose(got, want, rtol=0.0, atol=1e-3):
            if reader.calls[0][1].dtype != np.float64:
                hint = ("every number is close but not equal: box-muller-v1 computes in float64 and the latent is "
                        f"cast to float32 only at the end (your normals were {reader.calls[0][1].dtype}). In float32 "
                        "a word above 2²⁴ loses its last bits before it becomes a uniform")
            else:
                hint = ("every number is close but not equal: the uniform of word x is exactly the centre of its "
                        "cell [x, x + 1) among 2³² equal cells of (0, 1) — no other scale or offset")
        return CheckResult(name, False, "z_999 differs from the library's initial latent",
                           where=f"d01 latent.initialized, z_999{list(index)} (stream position {flat}, "
                                 f"block {flat // 4})",
                           rule="every latent number within 1e-6", got=float(got[index]), expected=float(want[index]),
                           hint=hint or _NORMALS_CONCEPT)
    # 3. words the run never drew: 0 and 2³²−1 in every position
    extreme = _Transform(candidate, finite=False)
    got = extreme(_EXTREME_WORDS.copy())
    want = blocks_to_normals(_EXTREME_WORDS)
    index = _first_far(got, want, 1e-9)
    if index is not None:
        i = index[0]
        hint = (_non_finite_hint(_EXTREME_WORDS, i) if not np.isfinite(got[i]) else
                "word x stands for the cell [x, x + 1) of 2³² equal cells; its uniform is the cell's centre, so "
                "word 0 is not 0 and word 2³²−1 is not 1 — the mapping (box-muller-v1) must match exactly, "
                "even where log(u) is extreme")
        return CheckResult(name, False, "an extreme word is mapped wrongly",
                           where=f"extreme words, normal {i} (block {i // 4}, from the word pair "
                                 f"{_hex(_pair_words(_EXTREME_WORDS, i))})",
                           rule="normals within 1e-9", got=float(got[i]), expected=float(want[i]), hint=hint)
    return CheckResult(name, True, f"z_999 is reproduced (all {size} normals, "
                                   "counter 0 → 4096), and the extreme words 0 and 2³²−1 map exactly")


# -- §7.7: classifier-free guidance inside the loop (page 05) ------------------------------------

def _cfg_variants(batch: np.ndarray, scale: float) -> dict[str, tuple[np.ndarray, str]]:
    neg, pos = batch[0:1].astype(np.float64), batch[1:2].astype(np.float64)
    variants = {
        "rows swapped": (pos + scale * (neg - pos),
                         "your ε̂ is what you get by reading row 0 as the positive branch. The CFG batch is "
                         "built negative first (d00's cfg_batch_order is ['negative', 'positive']), so the "
                         "network's row 0 is ε_neg and row 1 is ε_pos: guidance starts from ε_neg and moves "
                         "w times (ε_pos − ε_neg)"),
        "positive only": (pos, "your ε̂ is the positive branch alone, which is guidance scale 1; the loop "
                               f"passes guidance_scale = {scale:g}: start from ε_neg and move w times (ε_pos − ε_neg)"),
        "negative only": (neg, "your ε̂ is the negative branch alone, which is guidance scale 0; the loop "
                               f"passes guidance_scale = {scale:g}"),
        "started from the positive branch": (
            pos + scale * (pos - neg),
            "your ε̂ starts from ε_pos; guidance starts from the negative (unconditional) prediction "
            "ε_neg, so that w = 1 gives exactly ε_pos and w = 0 exactly ε_neg"),
        "difference only": (scale * (pos - neg), "w·(ε_pos − ε_neg) is only the guidance direction: ε̂ starts "
                                                 "from the negative prediction ε_neg and adds it"),
    }
    if scale != 5.0:
        variants["scale fixed at 5"] = (neg + 5.0 * (pos - neg),
                                        f"your ε̂ uses the scale 5.0 of §7.6, but this run passes guidance_scale = "
                                        f"{scale:g}: use the argument, never a constant")
    return variants


_CFG_CONCEPT = ("ε̂ = ε_neg + w · (ε_pos − ε_neg), with ε_neg = row 0 and ε_pos = row 1 of the batch "
                "(d00's cfg_batch_order) and w the guidance_scale you are given; the result has the latent's "
                "shape [1, 4, 64, 64]")


class _Guidance:
    """The reader's combination as the loop's ``cfg_combine``; ``calls`` keeps (batch, scale, ε̂)."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[tuple[np.ndarray, float, np.ndarray]] = []

    def __call__(self, epsilon_batch, guidance_scale):
        batch = np.array(epsilon_batch, copy=True)
        got = _quiet_call(self.candidate, batch.copy(), guidance_scale)
        shape = (1, *batch.shape[1:])
        array = as_array(got, "the returned ε̂", dtype_kind="float")
        if array.shape != shape:
            raise CandidateProblem(f"ε̂ must have the latent's shape {list(shape)} (keep the batch axis of "
                                   f"size 1), got {list(array.shape)}; the batch you get is {list(batch.shape)}")
        self.calls.append((batch, float(guidance_scale), array))
        return array

    def diagnose(self, step: int) -> str | None:
        if not 1 <= step <= len(self.calls):
            return None
        batch, scale, got = self.calls[step - 1]
        for _name, (variant, hint) in _cfg_variants(batch, scale).items():
            if _close(got, variant, 1e-4):
                return hint
        return None

    def hint(self, div) -> str:
        if div.field.endswith("dtype"):
            return _dtype_hint("ε̂")
        event = div.event_b or div.event_a or {}
        step = event.get("logical_step")
        if event.get("event_type") == "denoise.updated" and isinstance(step, int):
            return self.diagnose(step) or _CFG_CONCEPT
        return _CFG_CONCEPT


def _compare_steps(name: str, case: str, run, reference, attribute: str, atol: float, hint_for) -> CheckResult | None:
    """The whole arrays ``run.<attribute>[k]`` against the reference, step by step."""
    for k, (got, want) in enumerate(zip(getattr(run, attribute), getattr(reference, attribute), strict=True), start=1):
        index = _first_far(np.asarray(got), np.asarray(want), atol)
        if index is not None:
            event = run.events[1 + k]
            return CheckResult(name, False, f"{attribute} differs from the library's beyond {atol:g}",
                               where=f"{event['event_id']} denoise.updated (step {k}, t = {event['payload']['timestep']}), "
                                     f"{attribute}{list(index)} — {case}",
                               rule=f"every number within {atol:g}", got=float(np.asarray(got)[index]),
                               expected=float(np.asarray(want)[index]), hint=hint_for(k))
    return None


@exercise(
    "cfg_combine",
    page=PAGE_DENOISE,
    signature=("epsilon_batch", "guidance_scale"),
    task="split the network's output for the CFG batch [2, 4, 64, 64] (rows: negative, positive) and return "
         "the guided noise ε̂ [1, 4, 64, 64] for the given guidance_scale",
)
def check_cfg_combine(candidate) -> CheckResult:
    from labkit.diffusion import DiffusionConfig

    name = "cfg_combine"
    cases = [("the chapter's run (guidance 5.0) vs the golden trace", None, _golden),
             ("the same run with guidance_scale = 2.0 vs the library's run", DiffusionConfig(guidance_scale=2.0),
              None)]
    for case, config, expected in cases:
        reader = _Guidance(candidate)
        mine = _run(config, cfg_combine=reader)
        reference = _reference(config)
        failed = _compare(name, case, expected() if expected else reference.events, mine.events, reader.hint)
        if failed is not None:
            return failed
        failed = _compare_steps(name, case, mine, reference, "epsilon_guided", 1e-5,
                                lambda k, reader=reader: reader.diagnose(k) or _CFG_CONCEPT)
        if failed is not None:
            return failed
    return CheckResult(name, True, "all four denoise steps reproduce the golden trace (d00–d05), and a run "
                                   "with guidance 2.0 matches the library's too")


# -- §7.8: the DDIM step (page 06) --------------------------------------------------------------

_X0_CONCEPT = ("x̂₀ undoes the forward noising z_t = √ᾱ_t·x₀ + √(1−ᾱ_t)·ε: solve it for x₀. The amplitudes "
               "are square roots, √ᾱ_t and √(1−ᾱ_t), of the table's ᾱ_t = alpha_bars[t]")
_ZPREV_CONCEPT = ("With σ = 0, z_prev puts the estimate back at the noise level ᾱ_prev: √ᾱ_prev·x̂₀ plus "
                  "√(1−ᾱ_prev)·ε, the same predicted noise; ᾱ_prev = alpha_bars[prev_t], and 1.0 after the "
                  "last timestep (prev_t is None)")
_LAST_STEP = ("after the last timestep (prev_t is None) there is no earlier level: ᾱ_prev = 1.0 "
              "(final_alpha_bar), so the last step returns z₀ = x̂₀")


def _ddim_reference(z, eps, a_t, a_prev):
    from labkit.diffusion import ddim_step

    return ddim_step(np.asarray(z, dtype=np.float64), np.asarray(eps, dtype=np.float64), a_t, a_prev)


def _ddim_hint(z, eps, t, prev_t, table, got_z, got_x0, atol: float) -> str:
    """Name the mistake behind a wrong (z_prev, x̂₀), or explain the formula that differs."""
    z, eps = np.asarray(z, dtype=np.float64), np.asarray(eps, dtype=np.float64)
    a_t = float(table[t])
    a_prev = 1.0 if prev_t is None else float(table[prev_t])
    want_z, want_x0 = _ddim_reference(z, eps, a_t, a_prev)
    if _close(got_z, want_x0, atol) and _close(got_x0, want_z, atol) and not _close(want_z, want_x0, atol):
        return "you returned (x̂₀, z_prev): the step returns (z_prev, x̂₀), in that order"
    if not _close(got_x0, want_x0, atol):
        if _close(got_x0, (z - (1 - a_t) * eps) / a_t, atol):
            return ("you used ᾱ_t where √ᾱ_t belongs (and 1−ᾱ_t for √(1−ᾱ_t)): ᾱ is a fraction of the "
                    "variance, the sample mixes amplitudes. " + _X0_CONCEPT)
        return _X0_CONCEPT
    x0 = want_x0
    if prev_t is None:
        for label, other in (("alpha_bars[0]", float(table[0])), ("alpha_bars[-1]", float(table[-1]))):
            if _close(got_z, np.sqrt(other) * x0 + np.sqrt(1 - other) * eps, atol):
                return f"at the last step you used ᾱ_prev = {label} = {other:.6g}; " + _LAST_STEP
        return _LAST_STEP + ". " + _ZPREV_CONCEPT
    mistakes = (
        ((a_prev * x0 + (1 - a_prev) * eps),
         "you used ᾱ_prev where √ᾱ_prev belongs (and 1−ᾱ_prev for √(1−ᾱ_prev))"),
        ((np.sqrt(a_prev) * eps + np.sqrt(1 - a_prev) * x0),
         "you swapped the two parts: the signal part scales x̂₀ and the noise part scales ε"),
        ((np.sqrt(a_prev) * eps + np.sqrt(1 - a_prev) * eps),
         "you used ε where x̂₀ belongs: the signal part is √ᾱ_prev·x̂₀"),
        ((np.sqrt(a_prev) * z + np.sqrt(1 - a_prev) * eps),
         "you re-noised z_t instead of the estimate: the signal part is √ᾱ_prev·x̂₀, not √ᾱ_prev·z_t"),
        ((np.sqrt(a_prev) * x0), "you dropped the noise part: deterministic DDIM keeps the predicted noise, "
                                 "√(1−ᾱ_prev)·ε (only σ·noise is zero)"),
    )
    for value, hint in mistakes:
        if _close(got_z, value, atol):
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
            got = _quiet_call(self.candidate, z_t.copy(), epsilon.copy(), t, prev_t, alpha_bars)
        except CandidateProblem as problem:
            if prev_t is None:
                raise CandidateProblem(f"{problem} — at t = {t}, the last step, prev_t is None: {_LAST_STEP}") from None
            raise
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CandidateProblem(f"return the pair (z_prev, x0_hat), got {type(got).__name__}"
                                   + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else ""))
        z_prev = as_array(got[0], "z_prev", shape=z_t.shape, dtype_kind="float")
        x0_hat = as_array(got[1], "x0_hat", shape=z_t.shape, dtype_kind="float")
        self.calls.append((z_t, epsilon, t, prev_t, alpha_bars, z_prev, x0_hat))
        return z_prev, x0_hat

    def hint(self, k: int, atol: float = 1e-4) -> str:
        z, eps, t, prev_t, table, got_z, got_x0 = self.calls[k - 1]
        return _ddim_hint(z, eps, t, prev_t, table, got_z, got_x0, atol)

    def trace_hint(self, div) -> str:
        if div.field.endswith("dtype"):
            return _dtype_hint("z_prev and x̂₀")
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
    page=PAGE_DDIM,
    signature=("z_t", "epsilon", "t", "prev_t", "alpha_bars"),
    task="one deterministic DDIM step (η = 0, ε-prediction) from timestep t to prev_t (None after the last): "
         "look up ᾱ in alpha_bars and return (z_prev, x0_hat), each of z_t's shape and dtype",
)
def check_ddim_update(candidate) -> CheckResult:
    name = "ddim_update"
    # 1. the §7.8 two-dimensional sub-fixture, step 2 → 1 then 1 → 0
    table, z, steps, tolerance = _subfixture()
    reader = _Step(candidate)
    for k, (t, prev_t, eps) in enumerate(steps, start=1):
        got_z, got_x0 = reader(z, eps, t, prev_t, table)
        want_z, want_x0 = _ddim_reference(z, eps, table[t], table[prev_t])
        for label, got, want in (("x0_hat", got_x0, want_x0), ("z_prev", got_z, want_z)):
            index = _first_far(got, want, tolerance)
            if index is not None:
                return CheckResult(name, False, "the §7.8 sub-fixture is not reproduced",
                                   where=f"§7.8 sub-fixture, step t = {t} → {prev_t}: {label}{list(index)}",
                                   rule=f"within the sub-fixture's tolerance {tolerance:g}",
                                   got=float(got[index]), expected=float(want[index]),
                                   hint=reader.hint(k, tolerance))
        z = got_z
    # 2. the chapter's run: four steps 999 → 749 → 499 → 249 → end, against the golden trace
    case = "the chapter's run vs the golden trace"
    loop = _Step(candidate)
    mine = _run(scheduler_step=loop)
    failed = _compare(name, case, _golden(), mine.events, loop.trace_hint)
    if failed is not None:
        return failed
    reference = _reference(None)
    for k in range(1, len(reference.x0_hats) + 1):  # step by step, in the order the step computes them
        for label, got, want in (("x0_hat", mine.x0_hats[k - 1], reference.x0_hats[k - 1]),
                                 ("z_prev", mine.latents[k][1], reference.latents[k][1])):
            got, want = np.asarray(got), np.asarray(want)
            index = _first_far(got, want, 1e-4)
            if index is not None:
                event = mine.events[1 + k]
                return CheckResult(name, False, f"{label} differs from the library's beyond 1e-4",
                                   where=f"{event['event_id']} denoise.updated (step {k}, t = "
                                         f"{event['payload']['timestep']}), {label}{list(index)} — {case}",
                                   rule="every number within 1e-4", got=float(got[index]),
                                   expected=float(want[index]), hint=loop.hint(k))
    return CheckResult(name, True, "the §7.8 sub-fixture (2 → 1 → 0) and all four steps of the chapter's "
                                   "run reproduce the reference, ending on z₀ = x̂₀")
