"""A paged KV cache: fixed-size blocks, a block table per request, a free list, reference counts.

PagedAttention (Kwon et al. 2023, vLLM): a pool of ``capacity`` blocks of ``block_size`` positions, keys
and values ``[L, capacity, H_kv, block_size, d_h]``; a request's *block table* lists its blocks in position
order, position p at block = table[p // block_size], offset = p % block_size.  ``refcount[b]`` is the number
of tables holding b; refcount 0 means on the free list and nowhere else; a shared block is full and never
written again (that would change another request's past); only a full, live block is offered as a prefix.
``audit(tables)`` checks them all.
"""

from collections import deque

import numpy as np

from labkit.core.guards import is_integer


class BlockPool:
    """``capacity`` blocks of ``block_size`` positions for every layer; see the module docstring."""

    def __init__(self, capacity: int, block_size: int, n_layers: int, n_kv_heads: int, head_dim: int, dtype="float32"):
        for name, value in (("capacity", capacity), ("block_size", block_size), ("n_layers", n_layers)):
            if not is_integer(value) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        self.block_size = block_size
        shape = (n_layers, capacity, n_kv_heads, block_size, head_dim)
        self.keys, self.values = np.zeros(shape, dtype), np.zeros(shape, dtype)
        self.refcount = np.zeros(capacity, dtype=np.int64)
        self.free: deque[int] = deque(range(capacity))  # exactly the blocks with refcount 0
        self.prefix: dict[tuple[int, ...], int] = {}  # the tokens up to a full, computed block's end → block
        self.prefix_of: dict[int, tuple[int, ...]] = {}

    @property
    def capacity(self) -> int:
        return self.refcount.size

    @property
    def in_use(self) -> int:
        return self.capacity - len(self.free)

    def blocks_for(self, positions: int) -> int:
        """Blocks a table needs to hold ``positions`` positions: ⌈positions / block_size⌉."""
        return -(-positions // self.block_size)

    def allocate(self) -> int | None:
        """A free block, now held once; None when the pool is full (the scheduler preempts)."""
        if not self.free:
            return None
        block = self.free.popleft()
        self.refcount[block] = 1  # it was 0: the free list holds only unreferenced blocks
        return block

    def share(self, block: int) -> int:
        """One more table holds ``block`` (a common prefix): refcount + 1."""
        if self.refcount[block] < 1:
            raise ValueError(f"block must be in use to be shared, got free block {block}")
        self.refcount[block] += 1
        return block

    def release(self, block: int) -> None:
        """One table lets go of ``block``; at refcount 0 it goes back to the free list."""
        if self.refcount[block] < 1:
            raise ValueError(f"block {block} is free already: released twice")
        self.refcount[block] -= 1
        if self.refcount[block] == 0:
            self.free.append(block)
            self.prefix.pop(self.prefix_of.pop(block, None), None)  # a freed block is no one's prefix

    def remember(self, tokens: tuple[int, ...], block: int) -> None:
        """``block`` is full and computed for the prefix ``tokens`` (which end at its last position)."""
        self.prefix.setdefault(tokens, block)
        self.prefix_of.setdefault(block, tokens)

    def cached_prefix(self, tokens: list[int]) -> list[int]:
        """The live blocks holding the longest whole-block prefix of ``tokens``, at most len − 1
        positions (the last token is always computed: its logits are the next step's)."""
        found, b = [], self.block_size
        while (len(found) + 1) * b <= len(tokens) - 1:
            block = self.prefix.get(tuple(tokens[: (len(found) + 1) * b]))
            if block is None:
                break
            found.append(block)
        return found

    def write(self, table: list[int], layer: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        """Store k, v ``[1, H_kv, n, d_h]`` at positions start … start + n − 1 of ``table``."""
        for i in range(k.shape[2]):
            block, offset = divmod(start + i, self.block_size)  # block index, offset = p // B, p % B
            block = table[block]
            assert self.refcount[block] == 1, (
                f"block {block} is shared (refcount {self.refcount[block]}): never written"
            )
            self.keys[layer, block, :, offset] = k[0, :, i]
            self.values[layer, block, :, offset] = v[0, :, i]

    def gather(self, table: list[int], layer: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Keys, values ``[1, H_kv, length, d_h]`` of positions 0 … length − 1, read through ``table``."""
        blocks = table[: self.blocks_for(length)]
        h, d = self.keys.shape[2], self.keys.shape[4]
        k = self.keys[layer, blocks].transpose(1, 0, 2, 3).reshape(h, -1, d)[:, :length]  # [H_kv, length, d_h]
        v = self.values[layer, blocks].transpose(1, 0, 2, 3).reshape(h, -1, d)[:, :length]
        return k[None], v[None]

    def audit(self, tables: list[list[int]]) -> None:
        """Every invariant of the module docstring, or an AssertionError naming the block."""
        held = np.zeros_like(self.refcount)
        for table in tables:
            for block in table:
                held[block] += 1
        for block in range(self.capacity):
            assert held[block] == self.refcount[block], (
                f"block {block}: held {held[block]}×, refcount {self.refcount[block]}"
            )
            assert (self.refcount[block] == 0) == (block in self.free), f"block {block}: refcount vs free list"
        assert len(set(self.free)) == len(self.free), "a block is on the free list twice"
        for tokens, block in self.prefix.items():  # a prefix is whole blocks, and only a live block is one
            assert len(tokens) % self.block_size == 0 and self.refcount[block] > 0, f"prefix entry of block {block}"
