"""Exercise of page 03 (§7.3–7.4): one decode step with the KV cache.

The reader's ``decode_one`` replaces the decoder's cached step inside ``run_text_trace``; the
whole greedy decode is compared with the golden trace (its per-layer shape ledger left out:
a substituted step reports only its logits), then a shorter prompt with the library's run.
"""

from __future__ import annotations

import numpy as np

from labkit.check._support import compare_traces, golden
from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise, passed

PAGE = "notebooks/07-traces/03-text-token-by-token.md"


def _without_ledger(events: list[dict]) -> list[dict]:
    """The events with the per-layer shape ledger of every decode removed (a substituted
    decode step reports only its logits, so the ledger is not part of that comparison)."""
    out = []
    for event in events:
        if event["event_type"] == "decode.completed" and "ledger" in event["payload"]:
            event = {**event, "payload": {k: v for k, v in event["payload"].items() if k != "ledger"}}
        out.append(event)
    return out


_DECODER_METHODS = ("forward", "decode_step", "prefill", "full_logits")


class DecoderParts:
    """What ``decode_one`` gets as ``decoder``: ``config`` and read-only ``weights``.

    The decoder's own forward pass is the thing the reader is writing, so it is not here.
    """

    def __init__(self, decoder):
        from labkit.nn import DecoderWeights

        arrays = {}
        for key, array in decoder.weights.to_arrays().items():
            frozen = array.copy()
            frozen.flags.writeable = False
            arrays[key] = frozen
        self.config = decoder.config
        self.dtype = decoder.dtype
        self.weights = DecoderWeights(
            arrays["embedding"],
            arrays["output"],
            [
                {k.rsplit(".", 1)[1]: v for k, v in arrays.items() if k.startswith(f"layers.{i}.")}
                for i in range(decoder.config.n_layers)
            ],
        )

    def __getattr__(self, attr: str):
        if attr in _DECODER_METHODS:
            raise CandidateProblem(
                f"decoder.{attr} is the step you are writing: build decode_one from "
                "decoder.config, decoder.weights and labkit.nn's rms_norm, rope and attention"
            )
        raise AttributeError(f"in this exercise the decoder offers only .config, .weights and .dtype, not .{attr}")

    def __repr__(self) -> str:
        return f"DecoderParts({self.config.model_id}: .config, .weights)"


def _decode_hint(div, diagnosis: str | None = None) -> str:
    field = div.field
    if field in ("new_cache_length", "cache_lengths") or field.startswith("cache_lengths"):
        return (
            "after one decode every layer's cache must be exactly one position longer: append the "
            "new token's key and value row (keys after RoPE) to each layer's cache, once — "
            "cache.append(layer, k, v)"
        )
    if field.endswith("dtype"):
        return "the model computes in float32: keep the weights' dtype all the way to the logits"
    event = div.event_b or div.event_a or {}
    if event.get("event_type") == "decode.completed":
        if diagnosis:
            return diagnosis
        fed_at = (div.event_a or {}).get("payload", {}).get("tensors", {}).get("raw_logits", {}).get("position", "L")
        return (
            f"the logits of the new position differ. Step-start convention: when this token was fed "
            f"the cache held {fed_at} positions, so the token sits at position {fed_at} = cache length "
            "before it is appended; rotate its q and k for that position, and let its query attend "
            "to every cached key plus its own"
        )
    return (
        "the run went another way after a decode: look at the first decode.completed event whose "
        "logits differ and at the step-start convention (feed at position = cache length)"
    )


class _DecodeStep:
    """The reader's ``decode_one`` as the runtime's decode step; ``calls`` keeps, per decode,
    the decoder, a copy of the cache before it, the token and the logits returned."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[tuple] = []

    def __call__(self, decoder, cache, token_id):
        before = cache.copy()
        got = call(self.candidate, DecoderParts(decoder), cache, int(token_id))
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
        row = array.reshape(vocab)
        self.calls.append((decoder, before, int(token_id), row))
        return row

    def run(self, config=None):
        from labkit.text.runtime import run_text_trace

        self.calls = []
        from labkit.text.hooks import TextHooks

        return run_text_trace(config, TextHooks(decode_step=self))

    def hint(self, div) -> str:
        return _decode_hint(div, self._diagnose(div))

    def _diagnose(self, div) -> str | None:
        """Name a classic mistake when the reader's logits are what that mistake gives: the
        token rotated as if at position 0 (the book's reset_rope_position fault)."""
        from labkit.nn import Decoder, DecoderFaults

        event = div.event_b or div.event_a or {}
        step = event.get("logical_step")
        if event.get("event_type") != "decode.completed" or not isinstance(step, int) or step > len(self.calls):
            return None
        decoder, before, token, row = self.calls[step - 1]
        at_zero = Decoder(decoder.config, decoder.weights, DecoderFaults.named("reset_rope_position"))
        zero_row = at_zero.decode_step([token], before.copy()).next_logits[0]
        if np.allclose(row, zero_row, rtol=0.0, atol=1e-4):
            return (
                f"your logits match (to 1e-4) those of the token rotated as if it sat at position 0. "
                f"When it is fed, the cache holds {before.length} positions, so by the step-start "
                f"convention it sits at position {before.length} = cache length: rotate its q and k "
                "for that position"
            )
        return None


@exercise(
    "decode_one",
    page=PAGE,
    signature=("decoder", "cache", "token_id"),
    kind="extend",
    idea=(
        "one decode step is the full pass restricted to the newest position, reading the earlier positions "
        "from the cache"
    ),
)
def check_decode_one(candidate) -> CheckResult:
    """feed token_id at position = cache length through every layer (appending its key and value to
    the cache) and return the logits [V] of that position"""
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    reader = _DecodeStep(candidate)
    # 1. the chapter's request: the whole greedy decode against the golden trace
    mine = reader.run()
    failed = compare_traces(
        "the chapter's request vs the golden trace", _without_ledger(golden("text.jsonl")), mine.events, reader.hint
    )
    if failed is not None:
        return failed
    # 2. a shorter prompt (11 IDs), so the first decode feeds position 11, against the library
    shorter = TextTraceConfig(user="天空为什么是蓝色", max_output_tokens=6)
    reference = run_text_trace(shorter)
    mine = reader.run(shorter)
    failed = compare_traces(
        "the question without its question mark (11 input IDs) vs the library's run",
        _without_ledger(reference.events),
        mine.events,
        reader.hint,
    )
    if failed is not None:
        return failed
    decodes = sum(1 for s in mine.steps if s.cache_after)
    return passed(
        "the whole greedy decode reproduces the golden trace, and a second "
        f"request with an 11-token prompt matches too ({decodes} decodes)"
    )
