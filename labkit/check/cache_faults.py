"""Exercises of lab 05: checks that catch cache faults, judged on the lab's faulty decoders."""

from __future__ import annotations

import numpy as np

from labkit.check.core import function
from labkit.check.grading import yes_or_no


def _caches():
    from labkit.labs.cache_faults import MODES, run_case

    near = run_case("correct").cache.copy()
    near.keys[1] = near.keys[0] + 1e-13
    cases = [(f"decoder {mode} after 7 steps", (run_case(mode).cache,)) for mode in MODES]
    return [*cases, ("layer 1 = layer 0 + 1e-13 (rounding noise)", (near,))]


@function(_caches, hook=yes_or_no)
def distinct_layer_keys(cache):
    return not np.allclose(cache.keys[0], cache.keys[1])


def _decoders():
    from labkit.labs.cache_faults import MODES
    from labkit.labs.lab_decoder import lab_decoder, lab_tokens

    cases = [(f"decoder {mode}, the lab's tokens", (lab_decoder(fault), lab_tokens())) for mode, fault in MODES.items()]
    return [*cases, ("decoder correct, tokens [16, 0, 7, 7]", (lab_decoder(None), np.array([16, 0, 7, 7])))]


@function(_decoders, hook=yes_or_no)
def cached_path_agrees(model, tokens):
    from labkit.nn import KVCache

    cache = KVCache(model.config.n_layers)
    stepped = np.stack([model.decode_step(np.array([t]), cache).next_logits[0] for t in tokens])
    return bool(np.allclose(stepped, model.full_logits(tokens[None, :])[0], atol=1e-12, rtol=1e-12))
