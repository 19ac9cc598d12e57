"""Exercise of page 04 (§7.6): Philox words → standard normals.

The reader's transform replaces the stream's ``to_normals``, so it builds the initial latent
z₉₉₉ of event d01; the run is compared with the golden trace, then all 16384 numbers, then
the extreme words 0 and 2³²−1.  Hints recognise the usual mistakes (sine before cosine, pairs
across the block, the radius from the wrong uniform, …).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from labkit.check import _diffusion as diffusion
from labkit.check._support import close, compare_traces, first_far
from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, passed

PAGE = "notebooks/07-traces/04-diffusion-conditions-and-noise.md"


_NORMALS_CONCEPT = (
    "the stream maps each block's four words to four normals, block after block: every "
    "word becomes a uniform strictly inside (0, 1), then Box–Muller turns (u(x₀), u(x₁)) into "
    "(r·cos θ, r·sin θ) and (u(x₂), u(x₃)) into two more, with r = √(−2 ln u₁), θ = 2π u₂"
)

#: block 0 holds the extreme words 0 and 2³²−1 in every role; block 1 a few ordinary ones
_EXTREME_WORDS = np.array(
    [
        [0x00000000, 0x00000000, 0xFFFFFFFF, 0xFFFFFFFF],
        [0xFFFFFFFF, 0x00000000, 0x00000000, 0xFFFFFFFF],
        [0x80000000, 0x40000000, 0x00000001, 0xFFFFFFFE],
    ],
    dtype=np.uint32,
)


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
        "sine first": (
            lambda w: cos_sin(w, swap_trig=True),
            "each pair gives the cosine normal first and the sine normal second: (r·cos θ, r·sin θ)",
        ),
        "pairs across the block": (
            lambda w: cos_sin(w, pairs=((0, 2), (1, 3))),
            "a pair is two neighbouring words of one block: (x₀, x₁) and (x₂, x₃), not (x₀, x₂) and (x₁, x₃)",
        ),
        "radius from the second uniform": (
            lambda w: cos_sin(w, swap_roles=True),
            "the radius comes from the first uniform of the pair, "
            "r = √(−2 ln u₁), and the angle from the second, θ = 2π u₂",
        ),
        "grouped by position": (
            lambda w: cos_sin(w, by_block=False),
            "stream order is block by block: block b yields normals 4b, 4b+1, 4b+2, 4b+3; "
            "you grouped the first normal of every block, then the second, …",
        ),
    }


def _diagnose_normals(words: np.ndarray, normals: np.ndarray) -> str | None:
    for _name, (variant, hint) in _normals_variants().items():
        with np.errstate(all="ignore"):
            if close(normals, variant(words), 1e-9):
                return hint
    return None


def _pair_words(words: np.ndarray, i: int) -> np.ndarray:
    """The two words normal ``i`` of the stream comes from: (x₀, x₁) or (x₂, x₃) of its block."""
    first = (i % 4) // 2 * 2
    return words[i // 4, first : first + 2]


def _hex(words) -> str:
    return ", ".join(f"0x{int(w):08x}" for w in words)


def _non_finite_hint(words: np.ndarray, i: int) -> str:
    pair = _pair_words(words, i)
    if int(pair[0]) == 0:
        return (
            "word 0x00000000 did not become a uniform strictly inside (0, 1): ln u is −∞ at u = 0 (and NaN "
            "below). Word x stands for the cell [x, x + 1) of 2³² equal cells of (0, 1); its uniform is the "
            "cell's centre, never 0 and never 1"
        )
    return (
        "a normal is not finite: ln u is finite only for u strictly inside (0, 1) — check the uniform "
        f"of the word pair {_hex(pair)}"
    )


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
        got = call(self.candidate, words.copy())
        count = 4 * words.shape[0]
        try:
            array = np.asarray(got)
        except Exception:
            raise CandidateProblem(f"the returned normals must be array-like, got {type(got).__name__}") from None
        if array.dtype == object or array.dtype.kind not in "fiu":
            raise CandidateProblem(f"the returned normals must be numbers, got {type(got).__name__}")
        if array.shape != (count,):
            raise CandidateProblem(
                f"{words.shape[0]} blocks of 4 words must give {count} normals, shape [{count}] "
                f"in stream order; got shape {list(array.shape)}"
            )
        if array.dtype.kind != "f":
            raise CandidateProblem(f"the returned normals must be floating-point, got dtype {array.dtype}")
        bad = np.argwhere(~np.isfinite(array))
        if bad.size and self.finite:
            i = int(bad[0][0])
            raise CandidateProblem(
                f"normal {i} (block {i // 4}, from the word pair {_hex(_pair_words(words, i))}) "
                f"is {array[i]}: " + _non_finite_hint(words, i)
            )
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


@exercise("words_to_normals", page=PAGE, signature=("words",))
def check_words_to_normals(candidate) -> CheckResult:
    """turn Philox words uint32 [B, 4] into 4B standard normals (float, shape [4B]) in stream
    order: each word to a uniform strictly inside (0, 1), then Box–Muller on (x₀, x₁) and (x₂,
    x₃)"""
    from labkit.diffusion.normal import blocks_to_normals

    reader = _Transform(candidate)
    # 1. the initial latent of the chapter's run, against the golden trace (event d01)
    mine = diffusion.run(words_to_normals=reader)
    failed = compare_traces(
        "the chapter's run vs the golden trace", diffusion.golden(), mine.events, _normals_hint(reader)
    )
    if failed is not None:
        return failed
    # 2. the trace summarises z_999; compare all 16384 numbers with the library's latent
    got, want = mine.latents[0][1], diffusion.reference(None).latents[0][1]
    size = want.size
    index = first_far(got, want, 1e-6)
    if index is not None:
        flat = int(np.ravel_multi_index(index, want.shape))
        hint = _diagnose_normals(*reader.calls[0])
        if hint is None and np.allclose(got, want, rtol=0.0, atol=1e-3):
            if reader.calls[0][1].dtype != np.float64:
                hint = (
                    "every number is close but not equal: box-muller-v1 computes in float64 and the latent is "
                    f"cast to float32 only at the end (your normals were {reader.calls[0][1].dtype}). In float32 "
                    "a word above 2²⁴ loses its last bits before it becomes a uniform"
                )
            else:
                hint = (
                    "every number is close but not equal: the uniform of word x is exactly the centre of its "
                    "cell [x, x + 1) among 2³² equal cells of (0, 1) — no other scale or offset"
                )
        return failure(
            "z_999 differs from the library's initial latent",
            where=f"d01 latent.initialized, z_999{list(index)} (stream position {flat}, block {flat // 4})",
            rule="every latent number within 1e-6",
            got=float(got[index]),
            expected=float(want[index]),
            hint=hint or _NORMALS_CONCEPT,
        )
    # 3. words the run never drew: 0 and 2³²−1 in every position
    extreme = _Transform(candidate, finite=False)
    got = extreme(_EXTREME_WORDS.copy())
    want = blocks_to_normals(_EXTREME_WORDS)
    index = first_far(got, want, 1e-9)
    if index is not None:
        i = index[0]
        hint = (
            _non_finite_hint(_EXTREME_WORDS, i)
            if not np.isfinite(got[i])
            else "word x stands for the cell [x, x + 1) of 2³² equal cells; its uniform is the cell's centre, so "
            "word 0 is not 0 and word 2³²−1 is not 1 — the mapping (box-muller-v1) must match exactly, "
            "even where log(u) is extreme"
        )
        return failure(
            "an extreme word is mapped wrongly",
            where=f"extreme words, normal {i} (block {i // 4}, from the word pair "
            f"{_hex(_pair_words(_EXTREME_WORDS, i))})",
            rule="normals within 1e-9",
            got=float(got[i]),
            expected=float(want[i]),
            hint=hint,
        )
    return passed(
        f"z_999 is reproduced (all {size} normals, counter 0 → 4096), and the extreme words 0 and 2³²−1 map exactly"
    )
