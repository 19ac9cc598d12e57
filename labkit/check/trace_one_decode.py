"""What ``decode_one`` (page 03) is handed — the decoder's parts as plain read-only data, not a ``Decoder`` to
rebuild nor a cache the library's forward pass can drive — and its step judged against the full pass.
"""

from dataclasses import dataclass, fields

import numpy as np

from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, as_array, call, failure
from labkit.nn import Decoder, DecoderConfig, DecoderWeights

_DECODER_METHODS = ("forward", "decode", "decode_step", "prefill", "full_logits")


@dataclass(frozen=True)
class PartsConfig:
    """What ``decode_one`` reads of the configuration: the decoder's numbers, read-only (not a ``DecoderConfig``:
    there is no decoder to build here)."""

    model_id: str
    vocab_size: int
    width: int
    n_layers: int
    n_q_heads: int
    n_kv_heads: int
    head_dim: int
    norm_eps: float
    rope_base: float
    dtype: str
    group_size: int


@dataclass(frozen=True)
class PartsWeights:
    """embedding [V, d], output [d, V], layers: per layer {q, k, v, o, gate, up, down}, all read-only."""

    embedding: np.ndarray
    output: np.ndarray
    layers: list


def _frozen(array: np.ndarray) -> np.ndarray:
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    return copy


class DecoderParts:
    """What ``decode_one`` gets as ``decoder``: ``config`` and ``weights``, plain and read-only. The
    decoder's own forward pass is the thing the reader is writing, so it is not here."""

    def __init__(self, decoder: Decoder):
        cfg, w = decoder.config, decoder.weights
        self.config = PartsConfig(**{f.name: getattr(cfg, f.name) for f in fields(PartsConfig)})
        layers = [{name: _frozen(a) for name, a in layer.items()} for layer in w.layers]
        self.weights = PartsWeights(_frozen(w.embedding), _frozen(w.output), layers)
        self.dtype = decoder.dtype

    def __getattr__(self, attr: str):
        if attr in _DECODER_METHODS:
            message = say(
                "decoder.{attr} is the step you are writing: build decode_one from "
                "decoder.config, decoder.weights and labkit.nn's rms_norm, rope and attention",
                attr=attr,
            )
            raise CandidateProblem(message)
        raise AttributeError(f"in this exercise the decoder offers only .config, .weights and .dtype, not .{attr}")

    def __repr__(self) -> str:
        return f"DecoderParts({self.config.model_id}: .config, .weights)"


class CacheView:
    """What ``decode_one`` gets as ``cache``: its ``length``, each layer's ``keys``/``values`` (read-only
    copies) and ``append(layer, k, v)``, which returns that layer's full keys and values."""

    def __init__(self, cache):
        self._cache = cache

    @property
    def length(self) -> int:
        return self._cache.length

    @property
    def n_layers(self) -> int:
        return self._cache.n_layers

    def layer_length(self, layer: int) -> int:
        return self._cache.layer_length(layer)

    @property
    def keys(self) -> list:
        return [k if k is None else _frozen(k) for k in self._cache.keys]

    @property
    def values(self) -> list:
        return [v if v is None else _frozen(v) for v in self._cache.values]

    def append(self, layer, k, v):
        """Append [1, H_kv, 1, d_h] keys and values to ``layer``; return its full K, V [1, H_kv, T, d_h]."""
        return self._cache.append(layer, np.asarray(k), np.asarray(v))

    def __repr__(self) -> str:
        return f"cache of {self.n_layers} layers, length {self.length}"


def decode_step(candidate):
    """The reader's ``decode_one`` as the runtime's decode step: every layer one longer, a row of logits."""

    def step(decoder, cache, token_id):
        got = call(candidate, DecoderParts(decoder), CacheView(cache), int(token_id))
        lengths = [cache.layer_length(i) for i in range(cache.n_layers)]
        if len(set(lengths)) != 1:
            text = (
                "after your step the layers' caches hold different lengths {lengths}: "
                "every layer appends its own new key and value row, once"
            )
            raise CandidateProblem(say(text, lengths=lengths))
        vocab = decoder.config.vocab_size
        array = as_array(got, say("the returned logits"), dtype_kind="float")
        if array.size != vocab or any(n != 1 for n in array.shape[:-1]):
            text = (
                "decode_one must return the logits of the new position, shape [{vocab}] (or [1, {vocab}]), got {shape}"
            )
            raise CandidateProblem(say(text, vocab=vocab, shape=list(array.shape)))
        return array.reshape(vocab)

    return step


def without_ledger(events: list[dict]) -> list[dict]:
    """The events without each decode's per-layer shape ledger (a substituted decode step reports only its logits)."""

    def unledgered(payload: dict) -> dict:
        return {k: v for k, v in payload.items() if k != "ledger"}

    return [{**e, "payload": unledgered(e["payload"])} if e["event_type"] == "decode.completed" else e for e in events]


def seeded_decoder(seed: int, **shape) -> Decoder:
    """A decoder of another shape with seeded weights (scaled so every logit stays of order one)."""
    config = DecoderConfig(model_id=f"seeded-{seed}", **shape)
    rng = np.random.default_rng(seed)
    arrays = {name: rng.normal(size=s) * 0.4 for name, s in config.weight_shapes().items()}
    return Decoder(config, DecoderWeights.from_arrays(arrays, config))


_GROUPED = dict(vocab_size=13, width=8, n_layers=3, n_q_heads=4, n_kv_heads=2, head_dim=2, ffn_width=12)
_MULTI_HEAD = dict(vocab_size=9, width=6, n_layers=2, n_q_heads=3, n_kv_heads=3, head_dim=2, ffn_width=10)
_MULTI_HEAD_F64 = _MULTI_HEAD | dict(dtype="float64", rope_base=500.0, norm_eps=1e-5)
#: decoders the page never shows: (label, seed, shape, prompt length, decodes, tolerance)
OTHER_DECODERS = (
    ("3 layers, 4 query heads on 2 key/value heads, float32", 7, _GROUPED, 5, 3, 1e-4),
    ("multi-head, float64, rope_base 500, norm_eps 1e-5", 11, _MULTI_HEAD_F64, 3, 3, 1e-9),
)


def cached_equals_full(step, decoders=OTHER_DECODERS):
    """None when the reader's cached step gives, on each decoder (a seed and a shape, or a decoder), the full
    pass's logits of the fed position; else the failure at the first position that differs."""
    for label, seed, shape, prompt_length, decodes, tolerance in decoders:
        decoder = seed if isinstance(seed, Decoder) else seeded_decoder(seed, **shape)
        draw = np.random.default_rng(len(label) + prompt_length)
        ids = [int(i) for i in draw.integers(0, decoder.config.vocab_size, prompt_length + decodes)]
        _, cache = decoder.prefill(np.array([ids[:prompt_length]]))
        for position in range(prompt_length, prompt_length + decodes):
            got = step(decoder, cache, ids[position])
            full = decoder.full_logits(np.array([ids[: position + 1]]))[0, -1]
            where = say("{label}: the decode at position {position}", label=label, position=position)
            if cache.length != position + 1:
                message, rule = say("your step leaves the cache at another length"), say("one row per layer per token")
                return failure(message, where=where, rule=rule, got=cache.length)
            worst = int(np.argmax(np.abs(got - full)))
            if not abs(got[worst] - full[worst]) <= tolerance:
                rule = say("the cached step equals the full pass within {tolerance:g}", tolerance=tolerance)
                where = say("{where}, logits[{worst}]", where=where, worst=worst)
                message = say("your cached step differs from the full forward pass")
                return failure(message, where=where, rule=rule, got=float(got[worst]))
    return None
