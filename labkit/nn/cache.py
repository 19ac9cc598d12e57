"""A per-layer key/value cache: what prefill builds and every decode step extends."""

from typing import Self

import numpy as np

from labkit.core.guards import is_integer, real_array


class KVCache:
    """Keys and values of every layer, ``[B, H_kv, T, d_h]`` each, plus their positions.

    ``length`` is the number of cached positions; the next token is fed at
    ``position = length`` (the step-start convention of §7.3–7.4).
    """

    def __init__(self, n_layers: int):
        if not is_integer(n_layers) or n_layers < 1:
            raise ValueError(f"n_layers must be an integer >= 1, got {n_layers!r}")
        self.keys: list[np.ndarray | None] = [None] * n_layers
        self.values: list[np.ndarray | None] = [None] * n_layers

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    def layer_length(self, layer: int) -> int:
        k = self.keys[layer]
        return 0 if k is None else int(k.shape[-2])

    @property
    def length(self) -> int:
        """Cached positions; all layers agree or the cache is inconsistent."""
        lengths = {self.layer_length(i) for i in range(self.n_layers)}
        if len(lengths) != 1:
            raise RuntimeError(f"layers hold different cache lengths: {sorted(lengths)}")
        return lengths.pop()

    def _entry(self, layer, k_new, v_new, finite: bool) -> tuple[np.ndarray, np.ndarray]:
        """The checks of ``append``: a layer of this cache, and [B, H_kv, T_new, d_h] float keys and
        values of one shape that extend what the layer holds (−1 never means the last layer);
        ``finite``: the keys and values are known to be finite floats already."""
        if not is_integer(layer) or not 0 <= layer < self.n_layers:
            raise ValueError(f"layer must be an integer in [0, {self.n_layers - 1}], got {layer!r}")
        if not finite:
            k_new, v_new = real_array("k_new", k_new), real_array("v_new", v_new)
        held = self.keys[layer]
        if k_new.ndim != 4 or v_new.shape != k_new.shape:
            raise ValueError(
                f"k_new and v_new must share one [B, H_kv, T, d_h] shape, got {k_new.shape}, {v_new.shape}"
            )
        if held is not None and held.shape[:2] + held.shape[3:] != k_new.shape[:2] + k_new.shape[3:]:
            raise ValueError(f"k_new must extend layer {layer}'s [B, H_kv, T, d_h] = {held.shape}, got {k_new.shape}")
        return k_new, v_new

    def append(
        self, layer: int, k_new: np.ndarray, v_new: np.ndarray, *, finite: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Append [B, H_kv, T_new, d_h] keys and values to one layer; return the full K, V.
        ``finite``: they are the caller's own finite float arrays (the decoder's), not scanned again."""
        k_new, v_new = self._entry(layer, k_new, v_new, finite)
        if self.keys[layer] is None:
            k, v = k_new, v_new
        else:
            k = np.concatenate([self.keys[layer], k_new], axis=-2)
            v = np.concatenate([self.values[layer], v_new], axis=-2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def copy(self) -> Self:
        return self.truncated(self.length)

    def truncated(self, length: int) -> Self:
        """A copy holding only the first ``length`` positions (for prefix reuse)."""
        if not is_integer(length) or not 0 <= length <= self.length:
            raise ValueError(f"length must be in [0, {self.length}] (an integer), got {length!r}")
        twin = KVCache(self.n_layers)
        if length:
            twin.keys = [k[..., :length, :].copy() for k in self.keys]
            twin.values = [v[..., :length, :].copy() for v in self.values]
        return twin

    def shapes(self) -> list[dict[str, list[int]]]:
        return [
            {"K": list(k.shape) if k is not None else None, "V": list(v.shape) if v is not None else None}
            for k, v in zip(self.keys, self.values, strict=True)
        ]

    def __repr__(self) -> str:
        return f"KVCache(layers={self.n_layers}, length={self.length})"
