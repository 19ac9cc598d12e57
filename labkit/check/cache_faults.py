"""Exercises of lab 05: checks that catch cache faults."""

from __future__ import annotations

import numpy as np

from labkit.check.core import CandidateProblem, CheckResult, call, exercise, failure, passed


def _fault_runs():
    from labkit.labs.cache_faults import MODES, run_case

    return {mode: run_case(mode) for mode in MODES}


def _boolean(value, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise CandidateProblem(f"{what} must return True or False, got {type(value).__name__}")
    return bool(value)


@exercise(
    "distinct_layer_keys",
    page="notebooks/11-labs/05-cache-faults.md",
    signature=("cache",),
    kind="diagnose",
    idea="every layer computes its own keys; compare numbers, not array identity",
    rule="a copied cache is another array object with the same numbers and shape; rounding noise is not a difference",
)
def distinct_layer_keys(candidate) -> CheckResult:
    """given a KVCache of the two-layer lab decoder, return True when layer 0's and layer 1's
    cached keys differ (beyond float rounding), False when one layer holds the other's keys"""
    from labkit.nn import KVCache

    runs = _fault_runs()
    cases: dict[str, tuple[KVCache, bool]] = {
        f"decoder {mode} after 7 steps": (run.cache, run.distinct_layer_keys_passed) for mode, run in runs.items()
    }
    near = runs["correct"].cache.copy()
    near.keys[1] = near.keys[0] + 1e-13
    cases["layer 1 = layer 0 + 1e-13 (rounding noise)"] = (near, False)
    for case, (cache, expected) in cases.items():
        got = _boolean(call(candidate, cache.copy()), "distinct_layer_keys")
        if got == expected:
            continue
        return failure(
            "a cache was judged wrongly",
            where=f"case “{case}”",
            rule="True exactly when layer 0's and layer 1's cached keys are not equal within tolerance",
            got=got,
            expected=expected,
        )
    return passed(f"all {len(cases)} caches judged correctly; only the copied cache is flagged")


@exercise(
    "cached_path_agrees",
    page="notebooks/11-labs/05-cache-faults.md",
    signature=("model", "tokens"),
    kind="diagnose",
    idea="two ways of computing the same logits agree up to float rounding, never bit for bit",
    rule="the faults act only on incremental decode steps and keep every shape; summing in another order "
    "leaves rounding differences",
)
def cached_path_agrees(candidate) -> CheckResult:
    """given a Decoder and tokens [T], return True when decoding the tokens one step at a time from
    an empty KVCache gives the same logits as one full pass (atol = rtol = 1e-12)"""
    from labkit.labs.cache_faults import MODES
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    cases = [(f"decoder {mode}, the lab's tokens", fault, lab_tokens(), fault is None) for mode, fault in MODES.items()]
    cases.append(("decoder correct, tokens [16, 0, 7, 7]", None, np.array([16, 0, 7, 7]), True))
    for case, fault, tokens, expected in cases:
        got = _boolean(call(candidate, lab_decoder(fault), tokens.copy()), "cached_path_agrees")
        if got == expected:
            continue
        return failure(
            "a decoder was judged wrongly",
            where=f"case “{case}”",
            rule="True exactly when cached and full-pass logits agree within 1e-12",
            got=got,
            expected=expected,
        )
    return passed(
        f"all {len(cases)} decoders judged correctly: the three faults are caught and the correct cache passes"
    )
