"""From Philox words to standard normals: ``box-muller-v1`` (source §7.6).

Each Philox block (one counter) gives four uint32 words ``x₀…x₃``.  Each word becomes a
uniform strictly inside (0, 1):

    u = (x + ½) / 2³²        so  2⁻³³ ≤ u ≤ 1 − 2⁻³³   (never 0: log(u) is always finite)

and each pair (u₁, u₂) = (u(x₀), u(x₁)), (u(x₂), u(x₃)) becomes two normals by Box–Muller:

    r = √(−2 ln u₁),   θ = 2π u₂,   n₁ = r cos θ,   n₂ = r sin θ

so block b yields normals 4b … 4b+3 in the order (x₀x₁→cos, sin), (x₂x₃→cos, sin).
The arithmetic is float64; the caller casts to the latent dtype at the end.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from labkit.core.guards import is_integer, real_array
from labkit.diffusion.philox import block_counters, philox4x32_10, seed_to_key

NORMALS_PER_BLOCK = 4


def uint32_to_uniform(words) -> np.ndarray:
    """u = (x + ½)·2⁻³², float64, same shape as ``words`` (uint32): strictly inside (0, 1)."""
    words = np.asarray(words)
    if words.dtype != np.uint32:
        raise ValueError(f"words must be uint32, got dtype {words.dtype}")
    return (words.astype(np.float64) + 0.5) * 2.0**-32


def box_muller(u1, u2) -> tuple[np.ndarray, np.ndarray]:
    """Two independent standard normals from two uniforms in (0, 1); shapes [...] → ([...], [...])."""
    u1 = real_array("u1", u1).astype(np.float64)
    u2 = real_array("u2", u2).astype(np.float64)
    if u1.shape != u2.shape:
        raise ValueError(f"u1 and u2 must have one shape, got {list(u1.shape)} and {list(u2.shape)}")
    if u1.size and (u1.min() <= 0.0 or u1.max() >= 1.0):
        raise ValueError(f"u1 must lie strictly inside (0, 1), got values from {u1.min()} to {u1.max()}")
    radius = np.sqrt(-2.0 * np.log(u1))  # r = √(−2 ln u₁)
    angle = 2.0 * np.pi * u2  # θ = 2π u₂
    return radius * np.cos(angle), radius * np.sin(angle)


def blocks_to_normals(words) -> np.ndarray:
    """Philox output uint32 [B, 4] → float64 normals [4B] in stream order."""
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] != 4:
        raise ValueError(f"words must have shape [blocks, 4], got {list(words.shape)}")
    u = uint32_to_uniform(words)
    n0, n1 = box_muller(u[:, 0], u[:, 1])
    n2, n3 = box_muller(u[:, 2], u[:, 3])
    return np.stack([n0, n1, n2, n3], axis=1).reshape(-1)


@dataclass(frozen=True)
class NormalDraw:
    """One draw from the stream: the normals and the counters it consumed."""

    values: np.ndarray  # float64 [count]
    counter_before: int
    counter_after: int


class PhiloxNormalStream:
    """Standard normals from Philox4x32-10 under one key, tracking the block counter.

    ``to_normals`` turns the words of B blocks, uint32 [B, 4], into 4B normals in stream
    order (default ``blocks_to_normals``, box-muller-v1); another function may be passed
    in (the exercises run the reader's transform this way).

    >>> stream = PhiloxNormalStream(seed=314159)
    >>> draw = stream.normals(8)
    >>> (draw.counter_before, draw.counter_after)
    (0, 2)
    """

    def __init__(self, seed: int, counter: int = 0, to_normals: Callable[[np.ndarray], np.ndarray] | None = None):
        if to_normals is not None and not callable(to_normals):
            raise ValueError(
                f"to_normals must be a function (words uint32 [B, 4]) -> normals [4B], got {type(to_normals).__name__}"
            )
        self.to_normals = blocks_to_normals if to_normals is None else to_normals
        self.key = seed_to_key(seed)
        if not is_integer(counter) or counter < 0:
            raise ValueError(f"counter must be a non-negative integer, got {counter!r}")
        self.counter = int(counter)

    def normals(self, count: int) -> NormalDraw:
        """Draw ``count`` normals (a multiple of 4: whole blocks only), advancing the counter."""
        blocks = _whole_blocks(count)
        before = self.counter
        words = philox4x32_10(block_counters(before, blocks), self.key)  # uint32 [blocks, 4]
        values = np.asarray(self.to_normals(words))  # [4·blocks]
        if values.shape != (count,):
            raise ValueError(
                f"to_normals must return {NORMALS_PER_BLOCK} normals per block, shape [{count}] "
                f"for {blocks} blocks, got {list(values.shape)}"
            )
        self.counter = before + blocks
        return NormalDraw(values, before, self.counter)


def _whole_blocks(count) -> int:
    """How many Philox blocks ``count`` normals take: a non-negative multiple of 4."""
    if not is_integer(count) or count < 0:
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    if count % NORMALS_PER_BLOCK:
        raise ValueError(f"count must be a multiple of {NORMALS_PER_BLOCK} (whole Philox blocks), got {count}")
    return count // NORMALS_PER_BLOCK
