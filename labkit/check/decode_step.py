"""Exercise of page 03 (§7.3–7.4): one decode step with the KV cache.

The reader's ``decode_one`` replaces the decoder's cached step inside ``run_text_trace``; the
whole greedy decode is compared with the golden trace (its per-layer shape ledger left out:
a substituted step reports only its logits), then a shorter prompt with the library's run.
"""

from __future__ import annotations

from labkit.check.core import CandidateProblem, as_array, call
from labkit.check.grading import golden, trace

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


class _DecodeStep:
    """The reader's ``decode_one`` as the runtime's decode step: every layer one longer, a row of logits."""

    def __init__(self, candidate):
        self.candidate = candidate

    def __call__(self, decoder, cache, token_id):
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
        return row


def _run(config=None):
    def run(step):
        from labkit.text.hooks import TextHooks
        from labkit.text.runtime import run_text_trace

        return run_text_trace(config, TextHooks(decode_step=step)).events

    return run


def _runs():
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    shorter = TextTraceConfig(user="天空为什么是蓝色", max_output_tokens=6)  # 11 IDs: the first decode feeds 11
    return [
        ("the chapter's request vs the golden trace", _without_ledger(golden("text.jsonl")), _run()),
        (
            "the question without its question mark (11 input IDs) vs the library's run",
            _without_ledger(run_text_trace(shorter).events),
            _run(shorter),
        ),
    ]


trace(
    "decode_one",
    PAGE,
    "extend",
    "feed token_id at position = cache length through every layer (appending its key and value to the cache) "
    "and return the logits [V] of that position — from the decoder's parts, without its own step",
    ("decoder", "cache", "token_id"),
    _runs,
    hook=_DecodeStep,
    idea="one decode step is the full pass restricted to the newest position, reading the earlier positions "
    "from the cache",
    rule="the step-start convention: a token sits at the position the cache held before it was fed, and enters "
    "the cache once per layer; its query sees every cached key and its own; the model computes in float32",
)
