"""Lab: three cache bugs that keep every shape right and still change the logits.

Each broken decoder is the lab decoder with one ``DecoderFaults`` switch on (configuration,
not a patch); it decodes tokens [1, 5, 3, 8, 2, 9, 4] step by step and is compared with
the correct full forward pass.  Three checks run on every case:

- shape check: each layer's cache is [H, T, d_h] = [2, 7, 4] for keys and values;
- logit check: cached logits allclose to the full pass (atol = rtol = 1e-12);
- distinct-layer check: layer 0's and layer 1's cached keys are not allclose.

The report keeps the source's mode names; the source numbers its layers from 1, labkit
from 0, so the source's ``copy_layer1_cache_to_layer2`` is labkit's
``copy_layer0_cache_to_layer1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from labkit.labs.cache_equivalence import (
    ABS_TOLERANCE,
    RELATIVE_TOLERANCE,
    cached_logits,
    full_logits,
    per_sequence_cache_shapes,
)
from labkit.labs.common import max_abs_difference
from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens
from labkit.labs.report import require
from labkit.nn import KVCache

#: source mode name → labkit ``DecoderFaults`` name (None: no fault)
MODES: dict[str, str | None] = {
    "correct": None,
    "reset_rope_position": "reset_rope_position",
    "copy_layer1_cache_to_layer2": "copy_layer0_cache_to_layer1",
    "top_left_rectangular_mask": "top_left_rectangular_mask",
}


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
        """Per-layer key shapes [H, T, d_h] (batch axis of the [1, H, T, d_h] cache dropped)."""
        return per_sequence_cache_shapes(self.cache)

    @cached_property
    def shape_check_passed(self) -> bool:
        wanted = (1, LAB_CONFIG.n_kv_heads, self.expected.shape[0], LAB_CONFIG.head_dim)
        return all(
            k.shape == wanted and v.shape == wanted for k, v in zip(self.cache.keys, self.cache.values, strict=True)
        )

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
    """Decode the lab tokens with the fault the source calls ``mode`` and compare with the full pass.

    ``expected``: the correct decoder's full-pass logits [T, V] when the caller has them
    (they are the same for every mode); None computes them.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    tokens = lab_tokens()
    if expected is None:
        expected = full_logits(lab_decoder(), tokens)
    actual, cache = cached_logits(lab_decoder(MODES[mode]), tokens)
    return FaultCase(mode=mode, expected=expected, actual=actual, cache=cache)


def run() -> dict:
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
