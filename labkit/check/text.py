"""Exercises of trace one (§7.2–7.5): the reader's piece runs inside the real runtime.

``minimum_length_eos_mask`` replaces the library's processor of that name in
``run_text_trace``; ``decode_one`` replaces the decoder's cached step.  Each run's events
are compared with the reference run (the golden fixture trace for the default request)
by ``labkit.trace.divergence.first_divergence``, and the first divergent event — its ID and
type, the rule, the field, the reader's value and the expected one — is reported with a
hint about the idea that event tests.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from labkit.check.core import (
    CandidateProblem,
    CheckResult,
    as_array,
    call,
    compare_arrays,
    exercise,
)

PAGE_FIRST_TOKEN = "notebooks/07-traces/02-text-request-to-first-token.md"
PAGE_TOKEN_BY_TOKEN = "notebooks/07-traces/03-text-token-by-token.md"


# -- shared: run, compare, report -------------------------------------------------------------

def _golden() -> list[dict]:
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    return read_jsonl(fixture_path("traces", "text.jsonl"))


def _without_ledger(events: list[dict]) -> list[dict]:
    """The events with the per-layer shape ledger of every decode removed (a substituted
    decode step reports only its logits, so the ledger is not part of that comparison)."""
    out = []
    for event in events:
        if event["event_type"] == "decode.completed" and "ledger" in event["payload"]:
            event = {**event, "payload": {k: v for k, v in event["payload"].items() if k != "ledger"}}
        out.append(event)
    return out


def _compare(name: str, case: str, expected: list[dict], got: list[dict], hint_for) -> CheckResult | None:
    """None when the traces agree; otherwise the first divergence as a failed CheckResult.

    ``hint_for(divergence)`` turns the divergent event and field into a hint."""
    from labkit.trace.divergence import first_divergence

    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    where = (f"{event['event_id']} {event['event_type']} (step {event['logical_step']}), "
             f"field {div.field} — {case}")
    return CheckResult(name, False, "your run diverges from the reference run", where=where,
                       rule=div.rule, got=div.value_b, expected=div.value_a, hint=hint_for(div))


# -- §7.2: the minimum-length EOS mask ---------------------------------------------------------

_EOS_HINT_CONTRACT = ("a processor returns a new row: EOS's entry becomes −∞ (-np.inf, not a large "
                      "negative number) or stays as it was; every other entry passes through unchanged")


def _tokens(n) -> str:
    if n == 0:
        return "no token had"
    return f"{n} token{'s' if n != 1 else ''} had"


def _eos_hint(div, outputs: list | None = None) -> str:
    """``outputs``: the reader's returned rows of this run, one per selection step."""
    event = div.event_b or div.event_a or {}
    payload = event.get("payload", {})
    config_note = ("Read EOS's ID and the minimum from context.config (eos_id, minimum_output_tokens) "
                   "and the count from context.selected_so_far")
    if div.field.endswith("dtype"):
        return "keep the dtype of the logits you were given (float32 here); " + _EOS_HINT_CONTRACT
    step = event.get("logical_step")
    already = step - 1 if isinstance(step, int) else None
    if div.field.startswith("masked_ids") and isinstance(div.value_a, list) and isinstance(div.value_b, list):
        extra = sorted(set(div.value_b) - set(div.value_a))
        missing = sorted(set(div.value_a) - set(div.value_b))
        step_output = outputs[step - 1] if outputs and isinstance(step, int) and step <= len(outputs) else None
        if missing and step_output is not None and all(np.isfinite(step_output[i]) for i in missing) \
                and all(step_output[i] < -1e4 for i in missing):
            return (f"at step {step} your mask wrote the very negative number {float(step_output[missing[0]]):g} "
                    "for EOS. A mask writes −∞ (-np.inf): only then is the token impossible, "
                    "whatever the other logits are, and counted in masked_ids")
        if missing:
            return (f"at step {step} {_tokens(already)} been selected, fewer than the minimum, so EOS "
                    "must be −∞ (masked_ids lists the non-finite entries); the token being chosen right "
                    "now does not count yet. " + config_note)
        if extra:
            return (f"at step {step} {_tokens(already)} already been selected: once the minimum is "
                    "reached EOS must be left alone, and no other token is this mask's business. "
                    + config_note)
    if event.get("event_type") == "token.selected" and "token_id" in payload:
        return ("the selection changed because EOS was masked or left open at the wrong step: "
                "EOS is forbidden exactly while len(selected so far) < minimum_output_tokens. "
                + config_note)
    return _EOS_HINT_CONTRACT


class _EosProcessor:
    """The reader's mask as a processor of the runtime; ``outputs`` keeps what it returned."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.outputs: list[np.ndarray] = []

    def __call__(self, logits, context):
        before = np.array(logits, copy=True)
        got = call(self.candidate, logits, context)
        if not np.array_equal(np.asarray(logits), before, equal_nan=True):
            raise CandidateProblem("your function changed the logits it was given; a processor returns "
                                   "a new row (start from logits.copy())")
        row = as_array(got, "the returned logits", shape=before.shape, dtype_kind="float")
        self.outputs.append(row)
        return row

    def run(self, config=None):
        from labkit.text.hooks import TextHooks
        from labkit.text.runtime import run_text_trace

        self.outputs = []
        return run_text_trace(config, TextHooks(processors={"minimum_length_eos_mask": self}))

    def hint(self, div) -> str:
        return _eos_hint(div, self.outputs)


def _eos_direct_cases():
    """Contexts the default request never produces: another EOS ID, a zero minimum."""
    from labkit.text.processors import ProcessorContext, SamplingConfig

    row = np.linspace(-2.0, 3.0, 20, dtype=np.float32)
    return [
        ("EOS is ID 7, minimum 2, one token selected", row,
         ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14,))),
        ("EOS is ID 7, minimum 2, two tokens selected", row,
         ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14, 15))),
        ("minimum 0, nothing selected yet", row,
         ProcessorContext(SamplingConfig(minimum_output_tokens=0), ())),
    ]


@exercise(
    "minimum_length_eos_mask",
    page=PAGE_FIRST_TOKEN,
    signature=("logits", "context"),
    task="return a new row of logits [V] with EOS set to −∞ while fewer than "
         "context.config.minimum_output_tokens tokens have been selected",
)
def check_minimum_length_eos_mask(candidate) -> CheckResult:
    from labkit.text.processors import minimum_length_eos_mask
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    name = "minimum_length_eos_mask"
    reader = _EosProcessor(candidate)
    # 1. the chapter's request, inside the real runtime, against the golden trace
    mine = reader.run()
    failed = _compare(name, "the chapter's request (minimum 1) vs the golden trace",
                      _golden(), mine.events, reader.hint)
    if failed is not None:
        return failed
    # 2. a request that must not end before six tokens, against the library's run
    longer = TextTraceConfig(sampling=replace(TextTraceConfig().sampling, minimum_output_tokens=6))
    reference = run_text_trace(longer)
    mine = reader.run(longer)
    failed = _compare(name, "the same request with minimum_output_tokens = 6",
                      reference.events, mine.events, reader.hint)
    if failed is not None:
        return failed
    # 3. contexts the runtime does not reach here, row by row
    for case, row, context in _eos_direct_cases():
        result = compare_arrays(name, reader(row.copy(), context), minimum_length_eos_mask(row, context),
                                atol=0.0, where=f"{case}: logits", rule="masked entries and the rest unchanged",
                                hint="read EOS's ID and the minimum from context.config "
                                     "(eos_id, minimum_output_tokens), never assume 18 and 1")
        if not result.passed:
            return result
    opened = next((s.step for s in mine.steps if longer.sampling.eos_id not in s.masked_ids), None)
    held = f"holds EOS back until step {opened}" if opened else "holds EOS back to the end"
    return CheckResult(name, True, f"the golden trace is reproduced, a minimum of 6 {held}, "
                                   f"and {len(_eos_direct_cases())} other contexts are masked right")


# -- §7.3–7.4: one decode step with the cache ---------------------------------------------------

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
        self.weights = DecoderWeights(arrays["embedding"], arrays["output"], [
            {k.rsplit(".", 1)[1]: v for k, v in arrays.items() if k.startswith(f"layers.{i}.")}
            for i in range(decoder.config.n_layers)
        ])

    def __getattr__(self, attr: str):
        if attr in _DECODER_METHODS:
            raise CandidateProblem(f"decoder.{attr} is the step you are writing: build decode_one from "
                                   "decoder.config, decoder.weights and labkit.nn's rms_norm, rope and attention")
        raise AttributeError(f"in this exercise the decoder offers only .config, .weights and .dtype, "
                             f"not .{attr}")

    def __repr__(self) -> str:
        return f"DecoderParts({self.config.model_id}: .config, .weights)"


def _decode_hint(div, diagnosis: str | None = None) -> str:
    field = div.field
    if field in ("new_cache_length", "cache_lengths") or field.startswith("cache_lengths"):
        return ("after one decode every layer's cache must be exactly one position longer: append the "
                "new token's key and value row (keys after RoPE) to each layer's cache, once — "
                "cache.append(layer, k, v)")
    if field.endswith("dtype"):
        return "the model computes in float32: keep the weights' dtype all the way to the logits"
    event = div.event_b or div.event_a or {}
    if event.get("event_type") == "decode.completed":
        if diagnosis:
            return diagnosis
        fed_at = ((div.event_a or {}).get("payload", {}).get("tensors", {})
                  .get("raw_logits", {}).get("position", "L"))
        return (f"the logits of the new position differ. Step-start convention: when this token was fed "
                f"the cache held {fed_at} positions, so the token sits at position {fed_at} = cache length "
                "before it is appended; rotate its q and k for that position, and let its query attend "
                "to every cached key plus its own")
    return ("the run went another way after a decode: look at the first decode.completed event whose "
            "logits differ and at the step-start convention (feed at position = cache length)")


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
            raise CandidateProblem(f"after your step the layers' caches hold different lengths {lengths}: "
                                   "every layer appends its own new key and value row, once")
        vocab = decoder.config.vocab_size
        array = as_array(got, "the returned logits", dtype_kind="float")
        if array.size != vocab or any(n != 1 for n in array.shape[:-1]):
            raise CandidateProblem(f"decode_one must return the logits of the new position, shape [{vocab}] "
                                   f"(or [1, {vocab}]), got {list(array.shape)}")
        row = array.reshape(vocab)
        self.calls.append((decoder, before, int(token_id), row))
        return row

    def run(self, config=None):
        from labkit.text.hooks import TextHooks
        from labkit.text.runtime import run_text_trace

        self.calls = []
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
            return (f"your logits match (to 1e-4) those of the token rotated as if it sat at position 0. "
                    f"When it is fed, the cache holds {before.length} positions, so by the step-start "
                    f"convention it sits at position {before.length} = cache length: rotate its q and k "
                    "for that position")
        return None


@exercise(
    "decode_one",
    page=PAGE_TOKEN_BY_TOKEN,
    signature=("decoder", "cache", "token_id"),
    task="feed token_id at position = cache length through every layer (appending its key and value "
         "to the cache) and return the logits [V] of that position",
)
def check_decode_one(candidate) -> CheckResult:
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    name = "decode_one"
    reader = _DecodeStep(candidate)
    # 1. the chapter's request: the whole greedy decode against the golden trace
    mine = reader.run()
    failed = _compare(name, "the chapter's request vs the golden trace",
                      _without_ledger(_golden()), mine.events, reader.hint)
    if failed is not None:
        return failed
    # 2. a shorter prompt (11 IDs), so the first decode feeds position 11, against the library
    shorter = TextTraceConfig(user="天空为什么是蓝色", max_output_tokens=6)
    reference = run_text_trace(shorter)
    mine = reader.run(shorter)
    failed = _compare(name, "the question without its question mark (11 input IDs) vs the library's run",
                      _without_ledger(reference.events), mine.events, reader.hint)
    if failed is not None:
        return failed
    decodes = sum(1 for s in mine.steps if s.cache_after)
    return CheckResult(name, True, "the whole greedy decode reproduces the golden trace, and a second "
                                   f"request with an 11-token prompt matches too ({decodes} decodes)")
