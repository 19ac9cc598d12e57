"""The key of the preface and trace one: hidden references and hidden cases (other traces, vocabularies,
n-gram sizes, rows, decoders and requests) beside the public checks of ``labkit.check.trace_one``."""

from __future__ import annotations

import numpy as np

from labkit.check.core import attach, function, trace
from labkit.check.grading import Diverged, exactly
from labkit.check.trace_one import damaged_trace, looping_request
from labkit.check.trace_one_decode import cached_equals_full, without_ledger
from labkit.nn import attention, rms_norm, rope
from labkit.text.processors import SamplingConfig
from labkit.text.runtime import TextTraceConfig, run_text_trace
from labkit.tools.model import load_decoder as load_tool_decoder
from labkit.trace import kinds

# -- cut_off_events -------------------------------------------------------------------------------------


def _long_chain() -> list[dict]:
    """120 events (IDs past e99, where string order breaks); e57's parent is lost, e80 hangs from e20."""
    links = [(f"e{i:02d}", None if i == 0 else f"e{i - 1:02d}") for i in range(120)]
    links[57] = ("e57", "e999")
    links[80] = ("e80", "e20")
    return damaged_trace(*links)


def _hidden_traces():
    return [
        ("the first event has a parent", (damaged_trace(("e00", "e01"), ("e01", "e00"), ("e02", "e01")),)),
        ("120 events, one lost link", (_long_chain(),)),
        (
            "a forward link to a good event",
            (damaged_trace(("e00", None), ("e01", "e03"), ("e02", "e01"), ("e03", "e00")),),
        ),
        ("an event that is its own parent", (damaged_trace(("e00", None), ("e01", "e01"), ("e02", "e00")),)),
        (
            "a cycle of three",
            (damaged_trace(("e00", None), ("e01", "e03"), ("e02", "e01"), ("e03", "e02"), ("e04", "e00")),),
        ),
        (
            "two branches, one cut deep down",
            (
                damaged_trace(
                    ("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", None), ("e04", "e03"), ("e05", "e02")
                ),
            ),
        ),
        ("only the first event", (damaged_trace(("e00", None)),)),
    ]


@function(_hidden_traces, agree=exactly)
def cut_off_events(events):
    kept: set[str] = set()
    cut = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index == 0) or (parent is not None and parent in kept):
            kept.add(event["event_id"])
        else:
            cut.append(event["event_id"])
    return cut


# -- no_repeat_ngram_mask -----------------------------------------------------------------------------------


def _hidden_histories():
    rng = np.random.default_rng(43)
    row = rng.normal(size=50).astype(np.float32) * 2
    loop = tuple(int(t) for t in rng.integers(0, 6, size=40))
    return [
        ("V = 50, n = 4, a random history of 40 tokens", (row, loop, 4)),
        ("V = 50, n = 2, the same history", (row, loop, 2)),
        ("V = 50, n = 2, tokens above 20", (row, (30, 41, 30, 41, 30, 7), 2)),
        ("V = 50, n = 3, tokens above 20", (row, (49, 22, 35, 49, 22), 3)),
        ("n = 5 with 4 tokens selected", (row, (1, 2, 3, 4), 5)),
        ("n = 1, nothing selected", (row, (), 1)),
        ("n = 3, the tail overlaps itself: 7 7 7", (row, (7, 7, 7), 3)),
        ("float64, n = 2, the tail seen three times", (row.astype(np.float64), (9, 1, 9, 2, 9, 3, 9), 2)),
    ]


@function(_hidden_histories)
def no_repeat_ngram_mask(logits, selected, n):
    out = np.array(logits, copy=True)
    history = tuple(selected)
    tail = history[len(history) - n + 1 :] if n > 1 else ()
    if len(history) < n - 1:
        return out
    for start in range(len(history) - n + 1):
        if history[start : start + n - 1] == tail:
            out[history[start + n - 1]] = -np.inf
    return out


def _ngram_runs():
    """The looping request with n = 3 and n = 4, against the same request with the reference's mask."""
    runs = []
    for n in (3, 4):
        _, with_mask = looping_request(n)
        runs.append(
            (
                f"12 tokens with the mask at n = {n} vs the reference mask",
                with_mask(no_repeat_ngram_mask.reference),
                with_mask,
            )
        )
    return runs


attach("no_repeat_ngram_mask", runs=_ngram_runs)


# -- largest_min_p ------------------------------------------------------------------------------------------


def _hidden_rows():
    rng = np.random.default_rng(47)
    return [
        ("k = V, every token kept", (rng.normal(size=9), 9)),
        ("two maxima, k = 2", (np.array([1.5, -2.0, 1.5, 0.0]), 2)),
        ("logits near −3000, k = 2", (np.array([-3000.0, -3001.25, -3004.0]), 2)),
        ("float32 row of 64, k = 10", (rng.normal(size=64).astype(np.float32) * 4, 10)),
        ("k = 1 with −∞ entries", (np.array([-np.inf, 0.25, -np.inf]), 1)),
    ]


@function(_hidden_rows)
def largest_min_p(logits, k):
    z = np.sort(np.asarray(logits, dtype=np.float64))[::-1]
    return float(np.exp(z[k - 1] - z[0]))


# -- decode_one --------------------------------------------------------------------------------------------

#: decoders the public check does not use: (label, seed, shape, prompt length, decodes, tolerance)
HIDDEN_DECODERS = (
    (
        "4 layers, 6 query heads on 2 key/value heads",
        23,
        dict(vocab_size=17, width=12, n_layers=4, n_q_heads=6, n_kv_heads=2, head_dim=2, ffn_width=16),
        7,
        4,
        1e-4,
    ),
    (
        "one layer, one token of prompt",
        29,
        dict(vocab_size=5, width=4, n_layers=1, n_q_heads=1, n_kv_heads=1, head_dim=4, ffn_width=8),
        1,
        5,
        1e-4,
    ),
)


def _hidden_decoders(reader):
    found = cached_equals_full(reader, HIDDEN_DECODERS)
    if found is not None:
        raise Diverged(found)
    tool = (("toy-tool-decoder-v1 (trace three's)", load_tool_decoder(), None, 6, 3, 1e-4),)
    found = cached_equals_full(reader, tool)
    if found is not None:
        raise Diverged(found)
    return []


def decode_one_reference(decoder, cache, token_id):
    """One cached decode step from the parts (what ``reveal("decode_one")`` shows)."""
    cfg, weights = decoder.config, decoder.weights
    position = np.array([cache.length])  # step-start convention: the token sits at L = cache length

    def heads(x, n):  # [1, 1, n·d_h] → [1, n, 1, d_h]
        return x.reshape(1, 1, n, cfg.head_dim).transpose(0, 2, 1, 3)

    x = weights.embedding[[[token_id]]]  # [1, 1, d]
    for index, layer in enumerate(weights.layers):
        z = rms_norm(x, cfg.norm_eps)
        q = rope(heads(z @ layer["q"], cfg.n_q_heads), position, cfg.rope_base)
        k = rope(heads(z @ layer["k"], cfg.n_kv_heads), position, cfg.rope_base)
        keys, values = cache.append(index, k, heads(z @ layer["v"], cfg.n_kv_heads))  # [1, H_kv, L + 1, d_h]
        keys, values = (np.repeat(a, cfg.group_size, axis=1) for a in (keys, values))  # head h reads h // group
        mixed, _ = attention(q, keys, values, np.ones((1, keys.shape[-2]), dtype=bool))
        x = x + mixed.transpose(0, 2, 1, 3).reshape(1, 1, -1) @ layer["o"]
        z = rms_norm(x, cfg.norm_eps)
        gate = z @ layer["gate"]
        x = x + (gate / (1 + np.exp(-gate)) * (z @ layer["up"])) @ layer["down"]  # SwiGLU
    return (rms_norm(x, cfg.norm_eps) @ weights.output)[0, 0]


def _hooked(config):
    text = kinds.kind("text")
    return lambda reader: without_ledger(text.run(config, text.hooks(decode_step=reader)).events)


@trace(reference=decode_one_reference)
def decode_one():
    longer = TextTraceConfig(max_output_tokens=14, sampling=SamplingConfig(minimum_output_tokens=14))
    other = TextTraceConfig(user="为什么天空是蓝色？", max_output_tokens=5)
    return [
        (
            "14 tokens, positions up to 25, vs the library's run",
            without_ledger(run_text_trace(longer).events),
            _hooked(longer),
        ),
        ("another question vs the library's run", without_ledger(run_text_trace(other).events), _hooked(other)),
        ("other decoders: the cached step equals the full pass", None, _hidden_decoders),
    ]
