"""Trace one's exercises inside its runtime (pages 02–03): the minimum-length EOS mask and one
decode step with the KV cache, each run against the golden trace and a second request.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from labkit.check.core import hooked, trace
from labkit.check.grading import CandidateProblem, as_array, call, golden
from labkit.nn import DecoderWeights
from labkit.text import processors
from labkit.text.processors import ProcessorContext, SamplingConfig
from labkit.text.runtime import TextTraceConfig, run_text_trace

_DECODER_METHODS = ("forward", "decode_step", "prefill", "full_logits")


def _eos_processor(candidate):
    """The reader's mask as a processor of the runtime: it must return a new float row."""

    def processor(logits, context):
        before = np.array(logits, copy=True)
        got = call(candidate, logits, context)
        if not np.array_equal(np.asarray(logits), before, equal_nan=True):
            raise CandidateProblem(
                "your function changed the logits it was given; a processor returns a new row "
                "(start from logits.copy())"
            )
        return as_array(got, "the returned logits", shape=before.shape, dtype_kind="float")

    return processor


def _as_processor(config=None):
    """``run(piece)``: trace one with ``piece`` as its minimum-length EOS processor."""
    run = hooked("text", "processors", config=config)
    return lambda piece: run({"minimum_length_eos_mask": piece})


def _eos_contexts():
    """Contexts the default request never produces: another EOS ID, a zero minimum."""
    row = np.linspace(-2.0, 3.0, 20, dtype=np.float32)
    other_eos = SamplingConfig(eos_id=7, minimum_output_tokens=2)
    return [
        ("EOS is ID 7, minimum 2, one token selected", (row, ProcessorContext(other_eos, (14,)))),
        ("EOS is ID 7, minimum 2, two tokens selected", (row, ProcessorContext(other_eos, (14, 15)))),
        ("minimum 0, nothing selected yet", (row, ProcessorContext(SamplingConfig(minimum_output_tokens=0), ()))),
    ]


@trace(hook=_eos_processor, cases=_eos_contexts, reference=processors.minimum_length_eos_mask)
def minimum_length_eos_mask():
    longer = TextTraceConfig(sampling=replace(TextTraceConfig().sampling, minimum_output_tokens=6))
    return [
        ("the chapter's request (minimum 1) vs the golden trace", golden("text.jsonl"), _as_processor()),
        ("the same request with minimum_output_tokens = 6", run_text_trace(longer).events, _as_processor(longer)),
    ]


class DecoderParts:
    """What ``decode_one`` gets as ``decoder``: ``config`` and read-only ``weights``. The decoder's
    own forward pass is the thing the reader is writing, so it is not here."""

    def __init__(self, decoder):
        arrays = {key: array.copy() for key, array in decoder.weights.to_arrays().items()}
        for array in arrays.values():
            array.flags.writeable = False
        self.config, self.dtype = decoder.config, decoder.dtype
        self.weights = DecoderWeights.from_arrays(arrays, decoder.config)

    def __getattr__(self, attr: str):
        if attr in _DECODER_METHODS:
            raise CandidateProblem(
                f"decoder.{attr} is the step you are writing: build decode_one from "
                "decoder.config, decoder.weights and labkit.nn's rms_norm, rope and attention"
            )
        raise AttributeError(f"in this exercise the decoder offers only .config, .weights and .dtype, not .{attr}")

    def __repr__(self) -> str:
        return f"DecoderParts({self.config.model_id}: .config, .weights)"


def _decode_step(candidate):
    """The reader's ``decode_one`` as the runtime's decode step: every layer one longer, a row of logits."""

    def step(decoder, cache, token_id):
        got = call(candidate, DecoderParts(decoder), cache, int(token_id))
        lengths = [cache.layer_length(i) for i in range(cache.n_layers)]
        if len(set(lengths)) != 1:
            raise CandidateProblem(
                f"after your step the layers' caches hold different lengths {lengths}: "
                "every layer appends its own new key and value row, once"
            )
        vocab = decoder.config.vocab_size
        array = as_array(got, "the returned logits", dtype_kind="float")
        if array.size != vocab or any(n != 1 for n in array.shape[:-1]):
            raise CandidateProblem(
                f"decode_one must return the logits of the new position, shape [{vocab}] "
                f"(or [1, {vocab}]), got {list(array.shape)}"
            )
        return array.reshape(vocab)

    return step


def _without_ledger(events: list[dict]) -> list[dict]:
    """The events without the per-layer shape ledger of each decode (a substituted decode step reports
    only its logits, so the ledger is not part of that comparison)."""

    def unledgered(payload: dict) -> dict:
        return {k: v for k, v in payload.items() if k != "ledger"}

    return [{**e, "payload": unledgered(e["payload"])} if e["event_type"] == "decode.completed" else e for e in events]


@trace(hook=_decode_step)
def decode_one():
    shorter = TextTraceConfig(user="天空为什么是蓝色", max_output_tokens=6)  # 11 IDs: the first decode feeds 11
    return [
        (
            "the chapter's request vs the golden trace",
            _without_ledger(golden("text.jsonl")),
            hooked("text", "decode_step"),
        ),
        (
            "the question without its question mark (11 input IDs) vs the library's run",
            _without_ledger(run_text_trace(shorter).events),
            hooked("text", "decode_step", config=shorter),
        ),
    ]
