"""The public checks of chapter 11's labs 04 and 05 (the KV cache): the reader's cached step, run as every
layer's attention of the lab decoder, keeps the cache append-only and gives the full pass's logits; a cache's
size is what real caches hold; a check accepts the correct decoder and refuses the faulty ones.
"""

import functools
from dataclasses import replace

import numpy as np

from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, Diverged, as_array, call, failure, unpack, yes_or_no
from labkit.labs.cache_equivalence import MODES, run_case
from labkit.labs.lab_decoder import lab_decoder, lab_tokens
from labkit.nn import Decoder, DecoderWeights, KVCache
from labkit.nn.configs import book_config

# --- 04: the cached step inside the lab decoder, the cache's size, predictions ----------------


def decode_with_attention_step(step, model, tokens) -> np.ndarray:
    """Logits [T, V] of ``tokens`` fed one at a time through ``model``'s own layers, with
    ``step(t, layer, q, cache_k, cache_v, k_new, v_new) -> (output, keys, values)`` as each layer's cached
    attention (q, k_new, v_new [1, H, 1, d_h] rotated at position t; cache [1, H, t, d_h]) (valid only when
    n_q_heads == n_kv_heads, as in the lab decoder)."""
    cache, logits = KVCache(model.config.n_layers), []
    empty = np.zeros((1, model.config.n_kv_heads, 0, model.config.head_dim), dtype=model.dtype)
    for t, token in enumerate(np.asarray(tokens)):
        # one new query sees every cached key (allowed is all-true); the reader's step returns no weights
        def attend(layer, q, k, v, cache, allowed, t=t):
            held = [empty if a is None else a for a in (cache.keys[layer], cache.values[layer])]
            output, cache.keys[layer], cache.values[layer] = step(t, layer, q, *held, k, v)
            return output, None, cache.keys[layer], cache.values[layer]

        logits.append(model.forward(np.array([[int(token)]]), cache, attend=attend).logits[0, 0])
    return np.array(logits)


def _appending(candidate, tokens):
    """The reader's step as the driver's, stopping at the first step whose cache is not the old one
    with the new entry appended, or whose output is not [1, H, 1, d_h]."""

    def step(t, layer, q, cache_k, cache_v, k_new, v_new):
        args = (q, cache_k, cache_v, k_new, v_new)
        got = unpack(call(candidate, *(a.copy() for a in args)), ("output", "keys", "values"))
        place = f"decode step {t} (token {int(tokens[t])} at position {t}), layer {layer}"
        try:
            output = as_array(got[0], "output", shape=q.shape, dtype_kind="number")
            for name, old, new, seen in (("keys", cache_k, k_new, got[1]), ("values", cache_v, v_new, got[2])):
                seen = as_array(seen, name, shape=old.shape[:2] + (t + 1,) + old.shape[3:], dtype_kind="number")
                if not np.array_equal(seen, np.concatenate([old, new], axis=2)):
                    message = say("your cache is not the old one plus the new entry")
                    rule = say("the cached positions stay as they were and the new entry comes last")
                    where = say("{place}, {name}", place=place, name=name)
                    raise Diverged(failure(message, where=where, rule=rule, got=seen[0, 0, :, 0].tolist()))
        except CandidateProblem as problem:
            raise CandidateProblem(say("at {place}: {problem}", place=place, problem=problem)) from None
        return output, got[1], got[2]

    return step


@properties()
def cached_attention_step(candidate):
    model = lab_decoder()
    cases = (("the lab's seven tokens", lab_tokens()), ("tokens [16, 0, 7, 7, 3]", np.array([16, 0, 7, 7, 3])))
    for label, tokens in cases:
        try:
            stepped = decode_with_attention_step(_appending(candidate, tokens), model, tokens)
        except Diverged as stopped:
            return stopped.result
        full = model.full_logits(tokens[None, :])[0]
        off = np.flatnonzero(np.max(np.abs(stepped - full), axis=1) > 1e-10)
        if off.size:
            t = int(off[0])
            message = say("your cached logits differ from the full pass")
            where = say("{label}, logits at position {t}", label=label, t=t)
            rule = say("cached decode = one full pass, within 1e-10")
            return failure(message, where=where, rule=rule, got=stepped[t, :3].tolist())
    return None


@value
def cache_length_after_step_3() -> int:
    model, tokens = lab_decoder(), lab_tokens()
    _, cache = model.prefill(tokens[None, :4])
    for position in range(4, 7):
        model.decode_step(tokens[None, position : position + 1], cache)
    return int(cache.length)


def _measured_bytes(config, batch: int, positions: int) -> int:
    """The bytes a real ``Decoder(config)`` cache holds after a prefill of [batch, positions] tokens: the sum
    of every layer's key and value arrays' ``nbytes`` (the weights are seeded draws; they do not matter)."""
    generator = np.random.default_rng(0)
    arrays = {name: generator.normal(0.0, 0.1, shape) for name, shape in config.weight_shapes().items()}
    model = Decoder(config, DecoderWeights.from_arrays(arrays, config))
    _, cache = model.prefill(np.zeros((batch, positions), dtype=np.int64))
    return int(sum(k.nbytes + v.nbytes for k, v in zip(cache.keys, cache.values, strict=True)))


@properties()
def kv_cache_bytes(candidate):
    lab, grouped, tool = (book_config(name) for name in ("lab-decoder", "toy-decoder-v1", "toy-tool-decoder-v1"))
    cases = [
        ("the lab decoder, 1 sequence of 7 tokens", (lab, 1, 7)),
        ("toy-decoder-v1 (2 query heads share 1 KV head, float32), 2 × 5", (grouped, 2, 5)),
        ("toy-tool-decoder-v1 (4 query heads, 2 KV heads), 3 × 4", (tool, 3, 4)),
        ("the lab decoder in float32, 2 × 3", (replace(lab, dtype="float32"), 2, 3)),
    ]
    for label, args in cases:
        got = call(candidate, *args)
        a_number = isinstance(got, int | float | np.number) and not isinstance(got, bool)
        if not a_number or got != _measured_bytes(*args):
            message = say("a real cache of this configuration holds another number of bytes")
            rule = say("the sum of the cache arrays' nbytes")
            return failure(message, where=say("case “{label}”", label=label), rule=rule, got=got)
    return None


# --- 05: the two checks that catch the cache faults ------------------------------------------


def _near_copy(cache: KVCache, noise: float) -> KVCache:
    copied = cache.copy()
    copied.keys[1] = copied.keys[0] + noise
    return copied


@functools.cache
def _decoded_caches() -> tuple[KVCache, KVCache]:
    """The caches of the correct lab decoder and of copy_layer1_cache_to_layer2 after the seven lab tokens
    (run once; every check hands out copies)."""
    return run_case("correct").cache, run_case("copy_layer1_cache_to_layer2").cache


@properties(hook=yes_or_no)
def distinct_layer_keys(piece):
    correct, copied = _decoded_caches()
    cases = [
        ("the correct lab decoder's cache after 7 steps", correct.copy(), True),
        ("the cache of copy_layer1_cache_to_layer2", copied.copy(), False),
        ("layer 1 = a copy of layer 0's array", _near_copy(correct, 0.0), False),
        ("layer 1 = layer 0 + 1e-13 (rounding noise)", _near_copy(correct, 1e-13), False),
    ]
    for label, cache, right in cases:
        if piece(cache) is not right:
            message = say("your check judges this cache wrongly")
            rule = say("each layer computes its own keys; a copy, or a copy up to rounding, is not distinct")
            return failure(message, where=say("case “{label}”", label=label), rule=rule, got=not right)
    return None


@properties(hook=yes_or_no)
def cached_path_agrees(piece):
    tokens = lab_tokens()
    cases = [
        (f"decoder {mode}, the lab's tokens", lab_decoder(fault), tokens, fault is None)
        for mode, fault in MODES.items()
    ]
    one_token = "decoder top_left_rectangular_mask, one token (every fault is invisible at position 0)"
    cases += [
        ("decoder correct, tokens [16, 0, 7, 7]", lab_decoder(), np.array([16, 0, 7, 7]), True),
        (one_token, lab_decoder("top_left_rectangular_mask"), tokens[:1], True),
    ]
    for label, model, ids, right in cases:
        if piece(model, ids.copy()) is not right:
            message = say("your check judges this decoder wrongly")
            rule = say("step-by-step decode from an empty cache against one full pass, allclose at 1e-12")
            return failure(message, where=say("case “{label}”", label=label), rule=rule, got=not right)
    return None
