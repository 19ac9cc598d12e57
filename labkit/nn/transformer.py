"""A pre-norm decoder-only transformer with RoPE, grouped-query attention, SwiGLU and a KV cache.

One implementation serves the whole book: the chapter-11 lab decoder, toy-decoder-v1
(trace one) and toy-tool-decoder-v1 (trace three) differ only in ``DecoderConfig`` and
``DecoderWeights``.  Each layer computes

    z = RMSNorm(x);  q, k, v = z·W_q, z·W_k, z·W_v  (k, v with H_kv heads)
    q, k = RoPE(q, positions), RoPE(k, positions)
    x = x + Attention(q, [cache; k], [cache; v], allowed)·W_o
    z = RMSNorm(x);  x = x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down

and the head reads logits = RMSNorm(x)·W_out.  Faults (``DecoderFaults``) act only in ``decode``, the
incremental path, so the full forward pass stays the reference the faulty cache path is compared with.
"""

from dataclasses import dataclass, field, fields
from typing import Self

import numpy as np

from labkit.nn.attention import _allowed_mask, attention, causal_allowed
from labkit.nn.cache import KVCache
from labkit.nn.norm import rms_norm
from labkit.nn.rope import rope, rope_angles

LAYER_WEIGHT_NAMES = ("q", "k", "v", "o", "gate", "up", "down")


@dataclass(frozen=True)
class DecoderConfig:
    """Hyper-parameters; ``width`` is d, ``n_layers`` is L, vocabulary size is V."""

    model_id: str
    vocab_size: int
    width: int
    n_layers: int
    n_q_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_width: int
    dtype: str = "float32"
    rope_base: float = 10000.0
    norm_eps: float = 1e-6

    def __post_init__(self):
        for name in ("vocab_size", "width", "n_layers", "n_q_heads", "n_kv_heads", "head_dim", "ffn_width"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"DecoderConfig.{name} must be a positive integer, got {value!r}")
        if self.n_q_heads % self.n_kv_heads:
            raise ValueError(f"n_q_heads ({self.n_q_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads})")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE, got {self.head_dim}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")

    @property
    def group_size(self) -> int:
        """Query heads that share one key/value head (1 = multi-head attention)."""
        return self.n_q_heads // self.n_kv_heads

    def weight_shapes(self) -> dict[str, tuple[int, ...]]:
        d, f, q, kv = self.width, self.ffn_width, self.n_q_heads * self.head_dim, self.n_kv_heads * self.head_dim
        per_layer = {"q": (d, q), "k": (d, kv), "v": (d, kv), "o": (q, d), "gate": (d, f), "up": (d, f), "down": (f, d)}
        shapes = {"embedding": (self.vocab_size, d), "output": (d, self.vocab_size)}
        for i in range(self.n_layers):
            shapes.update({f"layers.{i}.{name}": shape for name, shape in per_layer.items()})
        return shapes


@dataclass
class DecoderWeights:
    """Embedding [V, d], output head [d, V] and, per layer, the seven matrices above."""

    embedding: np.ndarray
    output: np.ndarray
    layers: list[dict[str, np.ndarray]]

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays = {"embedding": self.embedding, "output": self.output}
        for i, layer in enumerate(self.layers):
            arrays.update({f"layers.{i}.{name}": layer[name] for name in LAYER_WEIGHT_NAMES})
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], config: DecoderConfig) -> Self:
        """Build and check weights: every expected name present, shapes exact, values finite."""
        expected = config.weight_shapes()
        missing, extra = sorted(set(expected) - set(arrays)), sorted(set(arrays) - set(expected))
        if missing or extra:
            raise ValueError(f"weights for {config.model_id} lack {missing} and have unexpected entries {extra}")
        dtype = np.dtype(config.dtype)
        checked = {}
        for name, shape in expected.items():
            array, weight = np.asarray(arrays[name]), f"weight {name!r} of {config.model_id}"
            if array.shape != shape:
                raise ValueError(f"{weight} must have shape {list(shape)}, got {list(array.shape)}")
            if array.dtype.kind != "f":
                raise ValueError(f"{weight} must be floating point, got {array.dtype}")
            if array.dtype.itemsize < dtype.itemsize:  # float16 cast up is not the model's weights
                raise ValueError(f"{weight} must be {dtype} (the model's), got {array.dtype}")
            if np.count_nonzero(np.isfinite(array)) != array.size:
                raise ValueError(f"{weight} contains NaN or infinity")
            checked[name] = array.astype(dtype, copy=False)
        layers = [{name: checked[f"layers.{i}.{name}"] for name in LAYER_WEIGHT_NAMES} for i in range(config.n_layers)]
        return cls(embedding=checked["embedding"], output=checked["output"], layers=layers)


@dataclass(frozen=True)
class DecoderFaults:
    """Deliberate bugs of the incremental (cached) decode path, for the fault labs.

    reset_rope_position: decode steps rotate q and k as if at position 0.
    copy_layer0_cache_to_layer1: after each decode step, layer 1's cache is overwritten
        by a copy of layer 0's (shapes stay right, ownership is wrong).
    top_left_rectangular_mask: decode steps use a top-left aligned lower-triangular
        mask over [T_new, T_cache] instead of the bottom-right aligned causal one.
    """

    reset_rope_position: bool = False
    copy_layer0_cache_to_layer1: bool = False
    top_left_rectangular_mask: bool = False

    def decode_inputs(self, positions: np.ndarray, key_positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What a decode step feeds at ``positions`` [T_new] over ``key_positions`` [T_cache]:
        (RoPE positions [T_new], allowed [T_new, T_cache]) — the right ones, or the faulty ones."""
        rope_positions = np.zeros_like(positions) if self.reset_rope_position else positions
        if self.top_left_rectangular_mask:
            return rope_positions, np.tril(np.ones((positions.size, key_positions.size), dtype=bool))
        return rope_positions, causal_allowed(positions, key_positions)

    def after_decode(self, cache: KVCache) -> None:
        """What a decode step leaves in the cache: with copy_layer0_cache_to_layer1, layer 0's copy in layer 1."""
        if self.copy_layer0_cache_to_layer1 and cache.n_layers > 1:
            cache.keys[1] = cache.keys[0].copy()
            cache.values[1] = cache.values[0].copy()

    @classmethod
    def named(cls, name: str | None) -> Self:
        """``None``/"correct" → no fault; otherwise exactly one named fault switched on."""
        if name in (None, "", "correct", "none"):
            return cls()
        names = [f.name for f in fields(cls)]
        if name not in names:
            raise ValueError(f"unknown decoder fault {name!r}; expected one of {names} or 'correct'")
        return cls(**{name: True})


@dataclass
class LayerRecord:
    """Shapes (read off the tensors) and, when asked, attention weights of one layer."""

    layer: int
    residual_in: list[int]
    q: list[int]
    k: list[int]
    v: list[int]
    score: list[int]
    residual_out: list[int]
    cache_k: list[int] | None = None
    cache_v: list[int] | None = None
    attention_weights: np.ndarray | None = field(default=None, repr=False)

    def ledger(self) -> dict[str, list[int] | int | None]:
        """The shapes, in field order, named as the trace's ledger names them (``Q``, ``cache_K``, …)."""
        names = {"q": "Q", "k": "K", "v": "V", "cache_k": "cache_K", "cache_v": "cache_V"}
        shapes = [item.name for item in fields(self) if item.name != "attention_weights"]
        return {names.get(name, name): getattr(self, name) for name in shapes}


@dataclass
class ForwardResult:
    """logits [B, T, V] for every fed position, their positions [T], and per-layer records."""

    logits: np.ndarray
    positions: np.ndarray
    layers: list[LayerRecord]
    embedding_shape: list[int]

    @property
    def next_logits(self) -> np.ndarray:
        """Raw logits of the last fed position: [B, V]."""
        return self.logits[:, -1, :]


def per_query_head(keys: np.ndarray, values: np.ndarray, group_size: int) -> tuple[np.ndarray, np.ndarray]:
    """[B, H_kv, T, d_h] → [B, H_q, T, d_h]: query head h reads key/value head h // group_size."""
    if group_size == 1:  # multi-head attention: each query head has its own
        return keys, values
    return np.repeat(keys, group_size, axis=1), np.repeat(values, group_size, axis=1)


class Decoder:
    """The book's decoder. ``prefill`` fills a cache; ``decode_step`` extends it by one token."""

    def __init__(self, config: DecoderConfig, weights: DecoderWeights, faults: DecoderFaults | None = None):
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"config must be a DecoderConfig, got {type(config).__name__}")
        self.config = config
        # new containers, checked; arrays already of the right dtype are shared, not copied
        self.weights = DecoderWeights.from_arrays(weights.to_arrays(), config)
        self.faults = faults or DecoderFaults()
        self.dtype = np.dtype(config.dtype)

    # -- shapes -------------------------------------------------------------
    def _split_heads(self, x: np.ndarray, heads: int) -> np.ndarray:
        """[B, T, H·d_h] → [B, H, T, d_h]"""
        b, t, _ = x.shape
        return x.reshape(b, t, heads, self.config.head_dim).transpose(0, 2, 1, 3)

    @staticmethod
    def _merge_heads(x: np.ndarray) -> np.ndarray:
        """[B, H, T, d_h] → [B, T, H·d_h]"""
        b, h, t, dh = x.shape
        return x.transpose(0, 2, 1, 3).reshape(b, t, h * dh)

    def _check_ids(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] < 1:
            raise ValueError(f"input_ids must be [B, T] with T >= 1, got shape {list(ids.shape)}")
        if ids.dtype.kind not in "iu":  # signed or unsigned integers
            raise ValueError(f"input_ids must be integers, got {ids.dtype}")
        bad = ids[(ids < 0) | (ids >= self.config.vocab_size)]
        if bad.size:
            raise ValueError(f"input_ids must lie in [0, {self.config.vocab_size}), got {int(bad.flat[0])}")
        return ids

    # -- the forward pass ------------------------------------------------------
    def forward(
        self,
        input_ids: np.ndarray,
        cache: KVCache | None = None,
        *,
        keep_attention: bool = False,
        rope_positions: np.ndarray | None = None,
        allowed: np.ndarray | None = None,
        attend=None,
    ) -> ForwardResult:
        """Run ``input_ids`` [B, T] after whatever ``cache`` holds (None: no cache at all).

        The new tokens sit at positions ``cache.length … cache.length + T − 1``; the
        cache, when given, is extended in place.  ``rope_positions`` [T] and ``allowed``
        [T, T_cache] default to those positions and the causal mask (``decode`` passes
        what the configured ``DecoderFaults`` make of them).  ``attend`` replaces each
        layer's :meth:`attend` (a check runs a reader's cached attention inside these layers);
        its contract is ``attend(layer, q, k, v, cache, allowed) -> (attended, weights | None,
        keys, values)``, and it must extend ``cache`` itself (as :meth:`attend` does).
        """
        cfg, w = self.config, self.weights
        ids = self._check_ids(input_ids)
        batch, t_new = ids.shape
        if cache is not None and cache.n_layers != cfg.n_layers:
            raise ValueError(f"cache has {cache.n_layers} layers, the model has {cfg.n_layers}")
        start = 0 if cache is None else cache.length
        positions = start + np.arange(t_new)
        rope_positions = positions if rope_positions is None else np.asarray(rope_positions)
        if rope_positions.shape != (t_new,):  # rope_angles checks that they are finite reals
            raise ValueError(f"rope_positions must be [T] with T={t_new}, got shape {list(rope_positions.shape)}")
        allowed = causal_allowed(positions, np.arange(start + t_new)) if allowed is None else allowed
        allowed = _allowed_mask(allowed, t_new, start + t_new)  # checked once: the kernels below trust it

        angles = rope_angles(rope_positions, cfg.head_dim, cfg.rope_base, self.dtype)  # shared by q, k of every layer
        x = w.embedding[ids]  # [B, T, d]
        embedding_shape = list(x.shape)
        records = []
        for i, layer in enumerate(w.layers):
            residual_in = list(x.shape)
            z = rms_norm(x, cfg.norm_eps, checked=True)
            q = rope(self._split_heads(z @ layer["q"], cfg.n_q_heads), rope_positions, angles=angles, checked=True)
            k = rope(self._split_heads(z @ layer["k"], cfg.n_kv_heads), rope_positions, angles=angles, checked=True)
            v = self._split_heads(z @ layer["v"], cfg.n_kv_heads)  # [B, H_kv, T, d_h]
            attended, weights, keys, values = (attend or self.attend)(i, q, k, v, cache, allowed)
            x = x + self._merge_heads(attended) @ layer["o"]
            z = rms_norm(x, cfg.norm_eps, checked=True)
            gate = z @ layer["gate"]
            silu = gate / (1 + np.exp(-gate))
            x = x + (silu * (z @ layer["up"])) @ layer["down"]
            # np.shape: weights may be None (a check's attend records no weights)
            shapes = [list(np.shape(a)) for a in (q, k, v, weights, x)]  # q, k, v, score, residual_out
            cached = (None, None) if cache is None else (list(keys.shape), list(values.shape))
            records.append(LayerRecord(i, residual_in, *shapes, *cached, weights if keep_attention else None))
        logits = rms_norm(x, cfg.norm_eps, checked=True) @ w.output  # [B, T, V]
        if not np.isfinite(logits).all():  # the one finiteness check of the pass: NaN and ∞ propagate to here
            raise ValueError(f"{cfg.model_id}: the forward pass overflowed {cfg.dtype} (non-finite logits)")
        return ForwardResult(logits=logits, positions=positions, layers=records, embedding_shape=embedding_shape)

    def attend(self, layer: int, q, k, v, cache: KVCache | None, allowed) -> tuple[np.ndarray, ...]:
        """One layer's attention: ``k``, ``v`` appended to ``cache`` (None: no cache), then every query
        head over the positions ``allowed`` lets it see.  Returns (attended, weights, keys, values)."""
        keys, values = (k, v) if cache is None else cache.append(layer, k, v, finite=True)  # [B, H_kv, T_cache, d_h]
        # grouped-query attention: query head h reads key/value head h // group_size
        keys_per_q, values_per_q = per_query_head(keys, values, self.config.group_size)
        attended, weights = attention(q, keys_per_q, values_per_q, allowed, checked=True)
        return attended, weights, keys, values

    def prefill(self, input_ids: np.ndarray, cache: KVCache | None = None, **kwargs) -> tuple[ForwardResult, KVCache]:
        """Fill a (new or given) cache with the prompt; the result's ``next_logits`` are step 1's."""
        cache = KVCache(self.config.n_layers) if cache is None else cache
        return self.forward(input_ids, cache, **kwargs), cache

    def decode(self, input_ids: np.ndarray, cache: KVCache, **kwargs) -> ForwardResult:
        """The incremental path: feed ``input_ids`` [B, T_new] after ``cache`` (extended in place).
        The configured faults act here, so the full forward pass stays a trustworthy reference."""
        if cache is None:
            raise ValueError("decode_step needs a KVCache (use an empty KVCache to start from nothing)")
        ids = self._check_ids(input_ids)
        start = cache.length
        positions = start + np.arange(ids.shape[1])
        rope_positions, allowed = self.faults.decode_inputs(positions, np.arange(start + ids.shape[1]))
        result = self.forward(ids, cache, rope_positions=rope_positions, allowed=allowed, **kwargs)
        self.faults.after_decode(cache)
        return result

    def decode_step(self, token_ids, cache: KVCache, **kwargs) -> ForwardResult:
        """Feed one token per batch row ([B] or [B, 1]) at position ``cache.length``."""
        return self.decode(np.asarray(token_ids).reshape(-1, 1), cache, **kwargs)

    def full_logits(self, input_ids: np.ndarray) -> np.ndarray:
        """Recompute every position from scratch, no cache: [B, T, V]."""
        return self.forward(input_ids).logits
