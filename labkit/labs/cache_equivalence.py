"""Labs 04 and 05: a KV cache changes the cost of decoding, never its logits — unless it is broken.

The lab decoder reads its seven tokens three ways — one full causal pass; seven cached decode steps;
for each t a fresh full pass over tokens[:t+1] — and all three give the same [7, 17] logits up to float64
rounding (1e-12).  Per layer the cache holds keys and values [B, H, T, d_h] = [1, 2, 7, 4].

The supplement ``cache_faults`` (lab 05): three cache bugs, each one ``DecoderFaults`` switch, that keep
every shape right and still change the logits; each faulty decoder's cached logits are compared with the
correct full pass by three checks (``FaultCase``): shapes, logits allclose, layers' keys distinct.
The source numbers layers from 1, labkit from 0: its ``copy_layer1_cache_to_layer2`` is labkit's
``copy_layer0_cache_to_layer1`` (``MODES``).
"""

from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

import numpy as np

from labkit.labs.common import max_abs_difference, require, require_close
from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens
from labkit.nn import Decoder, KVCache

ABS_TOLERANCE = 1e-12
RELATIVE_TOLERANCE = 1e-12
#: the future-perturbation check replaces tokens 4, 5, 6 by these
CHANGED_FUTURE = (10, 11, 12)
CHANGED_FROM = 4


def full_logits(model: Decoder, tokens: np.ndarray) -> np.ndarray:
    """tokens [T] → logits [T, V] of one uncached forward pass."""
    return model.full_logits(np.asarray(tokens)[np.newaxis, :])[0]


def cached_logits(model: Decoder, tokens: np.ndarray) -> tuple[np.ndarray, KVCache]:
    """Decode ``tokens`` [T] one at a time from an empty cache: logits [T, V] and the cache."""
    cache = KVCache(model.config.n_layers)
    rows = [model.decode_step(np.array([token]), cache).next_logits[0] for token in np.asarray(tokens)]
    return np.stack(rows), cache


def prefix_recompute_logits(model: Decoder, tokens: np.ndarray) -> np.ndarray:
    """Row t = last row of a fresh full pass over tokens[:t+1]: [T, V]."""
    tokens = np.asarray(tokens)
    return np.stack([full_logits(model, tokens[: t + 1])[-1] for t in range(tokens.size)])


def per_sequence_cache_shapes(cache: KVCache) -> list[list[int]]:
    """Each layer's key shape [H, T, d_h] (the batch axis of [B, H, T, d_h] dropped; B = 1)."""
    return [list(keys.shape[1:]) for keys in cache.keys]


def run() -> dict:
    """The ``cache_equivalence`` object of the source report."""
    model = lab_decoder()
    tokens = lab_tokens()
    full = full_logits(model, tokens)
    cached, cache = cached_logits(model, tokens)
    recomputed = prefix_recompute_logits(model, tokens)
    for name, other in (("full", full), ("prefix recompute", recomputed)):
        require_close(f"{name} vs cached logits", other, cached, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE)
    distinct = not np.allclose(cache.keys[0], cache.keys[1])
    require(distinct, "layers 0 and 1 hold the same cached keys: a layer lost its own cache")
    changed = tokens.copy()
    changed[CHANGED_FROM:] = CHANGED_FUTURE
    future_error = max_abs_difference(full[:CHANGED_FROM], full_logits(model, changed)[:CHANGED_FROM])
    cfg = LAB_CONFIG
    return {
        "configuration": {
            "layers": cfg.n_layers,
            "heads": cfg.n_q_heads,
            "head_dim": cfg.head_dim,
            "width": cfg.width,
            "ffn_width": cfg.ffn_width,
            "vocab": cfg.vocab_size,
            "tokens": int(tokens.size),
            "dtype": cfg.dtype,
            "position": "pairwise RoPE",
            "ffn": "SwiGLU",
        },
        "full_vs_cached_max_abs_logit_error": max_abs_difference(full, cached),
        "prefix_vs_cached_max_abs_logit_error": max_abs_difference(recomputed, cached),
        "future_perturbation_prefix_max_error": future_error,
        "per_layer_cache_shapes": per_sequence_cache_shapes(cache),
        "abs_tolerance": ABS_TOLERANCE,
        "relative_tolerance": RELATIVE_TOLERANCE,
    }


#: source mode name → labkit ``DecoderFaults`` name (None: no fault); read-only, as page 05 hands it out
MODES = MappingProxyType(
    {
        "correct": None,
        "reset_rope_position": "reset_rope_position",
        "copy_layer1_cache_to_layer2": "copy_layer0_cache_to_layer1",
        "top_left_rectangular_mask": "top_left_rectangular_mask",
    }
)


@dataclass
class FaultCase:
    """One decoder run: logits of both paths [T, V], the final cache, and the three checks
    (each computed once, when first asked for)."""

    mode: str
    expected: np.ndarray
    actual: np.ndarray
    cache: KVCache

    @property
    def per_position_error(self) -> np.ndarray:
        """max_v |expected − actual| at each position: [T]."""
        return np.max(np.abs(self.expected - self.actual), axis=-1)

    @property
    def cache_shapes(self) -> list[list[int]]:
        """Per-layer key shapes [H, T, d_h] (the batch axis of the [1, H, T, d_h] cache dropped)."""
        return per_sequence_cache_shapes(self.cache)

    @cached_property
    def shape_check_passed(self) -> bool:
        wanted = (1, LAB_CONFIG.n_kv_heads, self.expected.shape[0], LAB_CONFIG.head_dim)
        return all(array.shape == wanted for array in self.cache.keys + self.cache.values)

    @cached_property
    def logit_allclose_passed(self) -> bool:
        return bool(np.allclose(self.expected, self.actual, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE))

    @cached_property
    def distinct_layer_keys_passed(self) -> bool:
        return not np.allclose(self.cache.keys[0], self.cache.keys[1])

    @property
    def caught_by(self) -> list[str]:
        """Names of the checks this case fails (empty: nothing caught)."""
        checks = {
            "shape": self.shape_check_passed,
            "logit": self.logit_allclose_passed,
            "distinct_layer": self.distinct_layer_keys_passed,
        }
        return [name for name, passed in checks.items() if not passed]

    def report(self) -> dict:
        """This case as one entry of the report's ``cases`` list."""
        return {
            "mode": self.mode,
            "shape_check_passed": self.shape_check_passed,
            "per_layer_cache_shapes": self.cache_shapes,
            "max_absolute_logit_error": max_abs_difference(self.expected, self.actual),
            "logit_allclose_passed": self.logit_allclose_passed,
            "distinct_layer_keys_passed": self.distinct_layer_keys_passed,
        }


def run_case(mode: str, expected: np.ndarray | None = None) -> FaultCase:
    """Decode the lab tokens with the fault the source calls ``mode``, to compare with the full pass
    ``expected`` [T, V] (the same for every mode; None computes it)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    tokens = lab_tokens()
    if expected is None:
        expected = full_logits(lab_decoder(), tokens)
    actual, cache = cached_logits(lab_decoder(MODES[mode]), tokens)
    return FaultCase(mode=mode, expected=expected, actual=actual, cache=cache)


def run_faults() -> dict:
    """The ``cache_faults`` object of the source's supplement report."""
    expected = full_logits(lab_decoder(), lab_tokens())  # one full pass serves every mode
    cases = [run_case(mode, expected) for mode in MODES]
    correct, *broken = cases
    require(correct.logit_allclose_passed and not correct.caught_by, f"the correct decoder fails {correct.caught_by}")
    for case in broken:
        kept = case.shape_check_passed and not case.logit_allclose_passed
        require(kept, f"{case.mode} should keep its shapes and fail the logit check")
    return {
        "tokens": lab_tokens().tolist(),
        "atol": ABS_TOLERANCE,
        "rtol": RELATIVE_TOLERANCE,
        "cases": [case.report() for case in cases],
    }
