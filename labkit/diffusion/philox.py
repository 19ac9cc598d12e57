"""Philox4x32-10, the counter-based generator behind the initial latent (source §7.6).

Philox maps a 128-bit counter and a 64-bit key to 128 random bits with ten rounds of
multiply–xor–permute (Salmon et al., *Parallel random numbers: as easy as 1, 2, 3*, SC'11;
the reference code is Random123).  Because the output is a pure function of
``(counter, key)``, a trace can record exactly which counters a draw consumed.

NumPy's ``np.random.Philox`` is the 4×64 variant and yields other numbers, so the 4×32
variant is written out here, vectorised over any number of counters.

Words are uint32.  Each 32×32→64-bit product is formed in uint64 (which cannot overflow:
(2³²−1)² < 2⁶⁴) and split into its high and low halves with a shift and a mask.
"""

import numpy as np

from labkit.core.guards import is_integer

#: round multipliers M₀, M₁ and key increments W₀ (golden ratio), W₁ (√3 − 1), from Random123
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
#: the "-10" of Philox4x32-10
PHILOX_ROUNDS = 10

_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def _as_words(value, name: str, last: int) -> np.ndarray:
    """Check that ``value`` holds uint32 words with last axis ``last``; return it as uint32."""
    array = np.asarray(value)
    if array.ndim == 0 or array.shape[-1] != last:
        raise ValueError(f"{name} must have shape [..., {last}] of uint32 words, got shape {list(array.shape)}")
    if array.dtype.kind not in "ui":
        raise ValueError(f"{name} must hold unsigned 32-bit integers, got dtype {array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 0xFFFFFFFF):
        raise ValueError(f"{name} words must lie in [0, 2**32 - 1], got values from {array.min()} to {array.max()}")
    return array.astype(np.uint32)


def mulhilo32(multiplier: int, word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) 32-bit halves of the 64-bit product ``multiplier · word``; word: uint32 [...]."""
    product = np.uint64(multiplier) * word.astype(np.uint64)
    return (product >> _SHIFT32).astype(np.uint32), (product & _MASK32).astype(np.uint32)


def philox_round(c0, c1, c2, c3, k0, k1):
    """One Philox4x32 round on uint32 word arrays of one shape.

    (hi₀, lo₀) = M₀·c₀,  (hi₁, lo₁) = M₁·c₂
    c ← (hi₁ ⊕ c₁ ⊕ k₀,  lo₁,  hi₀ ⊕ c₃ ⊕ k₁,  lo₀)
    """
    hi0, lo0 = mulhilo32(PHILOX_M0, c0)
    hi1, lo1 = mulhilo32(PHILOX_M1, c2)
    return hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0


def bump_key(k0, k1):
    """Key schedule between rounds: k₀ ← k₀ + W₀, k₁ ← k₁ + W₁ (mod 2³²)."""
    k0 = ((k0.astype(np.uint64) + np.uint64(PHILOX_W0)) & _MASK32).astype(np.uint32)
    k1 = ((k1.astype(np.uint64) + np.uint64(PHILOX_W1)) & _MASK32).astype(np.uint32)
    return k0, k1


def philox4x32_10(counters, key) -> np.ndarray:
    """Philox4x32-10 of each counter under one key.

    counters: uint32 [..., 4] (word 0 is the least significant); key: uint32 [2].
    Returns uint32 [..., 4], the four random words of each counter.

    >>> philox4x32_10(np.zeros(4, np.uint32), np.zeros(2, np.uint32)).tolist()
    [1713891541, 3781805453, 3159862348, 2600524760]
    """
    counters = _as_words(counters, "counters", 4)
    key = _as_words(key, "key", 2)
    if key.ndim != 1:
        raise ValueError(f"key must have shape [2], got shape {list(key.shape)}")
    c0, c1, c2, c3 = (counters[..., i] for i in range(4))
    k0 = np.full(c0.shape, key[0], dtype=np.uint32)
    k1 = np.full(c0.shape, key[1], dtype=np.uint32)
    # ten rounds; the key is bumped between consecutive rounds (nine times)
    for round_number in range(1, PHILOX_ROUNDS + 1):
        if round_number > 1:
            k0, k1 = bump_key(k0, k1)
        c0, c1, c2, c3 = philox_round(c0, c1, c2, c3, k0, k1)
    return np.stack([c0, c1, c2, c3], axis=-1)


def seed_to_key(seed: int) -> np.ndarray:
    """The book's seed → key mapping: key = (seed mod 2³², ⌊seed / 2³²⌋), uint32 [2].

    ``seed`` must be an integer in [0, 2⁶⁴); 314159 becomes key (314159, 0).
    """
    if not is_integer(seed) or not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    seed = int(seed)
    return np.array([seed & 0xFFFFFFFF, seed >> 32], dtype=np.uint32)


def block_counters(start: int, count: int) -> np.ndarray:
    """Counters ``start, start+1, …, start+count−1`` as 128-bit words, uint32 [count, 4].

    Block number n is the counter (n mod 2³², ⌊n/2³²⌋ mod 2³², 0, 0).
    """
    if not is_integer(start) or start < 0:
        raise ValueError(f"start must be a non-negative integer counter, got {start!r}")
    if not is_integer(count) or count < 0:
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    if start + count > 2**64:
        raise ValueError(f"counters past 2**64 are not used by the book; start + count = {start + count}")
    blocks = np.arange(count, dtype=np.uint64) + np.uint64(start)
    words = np.zeros((count, 4), dtype=np.uint32)
    words[:, 0] = (blocks & _MASK32).astype(np.uint32)
    words[:, 1] = (blocks >> _SHIFT32).astype(np.uint32)
    return words
