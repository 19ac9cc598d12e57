"""Trace one, run for real: template → tokens → prefill → processors → greedy → decode → EOS.

``run_text_trace(config)`` takes one frozen ``TextTraceConfig`` and returns a ``TextRun``
holding the events e00–e24 (for the fault-free run) and the per-step ledger they were
made from.  The step-start convention of §7.3–7.4 holds throughout: when token t is
selected the cache still holds 12 + t − 1 positions; a decode then feeds y_t at
position = cache length; EOS ends the generation without a decode.

``logical_step`` is 0 for the request phase (e00–e04), t for the events of selection step
t (token.selected, stream.delta, and the decode that consumes y_t), and the last step for
the terminal events.  Payload keys follow CONTRIBUTING.md: ``artifacts`` (immutable IDs), ``tensors`` (summaries
with a few ``values``, compared under ``TENSOR_TOLERANCE``), everything else discrete.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from labkit.core.events import TraceRecorder, tensor_summary
from labkit.core.runtime import Config
from labkit.nn import Decoder, DecoderFaults, DecoderWeights, KVCache
from labkit.text.model import CONFIG, load_decoder, load_weights
from labkit.text.processors import (
    ProcessorContext,
    SamplingConfig,
    apply_processors,
    greedy_select,
    resolve_processors,
)
from labkit.text.template import Template
from labkit.text.tokenizer import Tokenizer

#: absolute tolerance for the float numbers of ``tensors`` payloads of this trace
TENSOR_TOLERANCE = 1e-3
TOP_VALUES = 3


@dataclass(frozen=True)
class WeightPerturbation:
    """Add ``delta`` to one entry of one stored weight (a fault: a bad checkpoint)."""

    name: str
    index: tuple[int, ...]
    delta: float

    def apply(self, weights: DecoderWeights) -> DecoderWeights:
        arrays = {k: v.copy() for k, v in weights.to_arrays().items()}
        if self.name not in arrays:
            raise ValueError(f"weight_perturbation.name must be one of {sorted(arrays)}, got {self.name!r}")
        target = arrays[self.name]
        if len(self.index) != target.ndim or not all(0 <= i < n for i, n in zip(self.index, target.shape, strict=True)):
            raise ValueError(f"weight_perturbation.index must address {self.name} of shape "
                             f"{list(target.shape)}, got {list(self.index)}")
        target[self.index] += np.float32(self.delta)
        return DecoderWeights.from_arrays(arrays, CONFIG)


@dataclass(frozen=True)
class TextTraceConfig(Config):
    """Everything that decides trace one; a named fault is a change of one of these fields."""

    trace_id: str = "trace-text-001"
    request_id: str = "req-text-001"
    system: str = "简洁回答"
    user: str = "天空为什么是蓝色？"
    max_output_tokens: int = 8
    stop_sequences: tuple[str, ...] = ()
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    decoder_faults: DecoderFaults = field(default_factory=DecoderFaults)
    weight_perturbation: WeightPerturbation | None = None
    detokenizer_encoding: str = "utf-8"
    batch_slot: int = 0
    fixtures_dir: str | None = None

    def __post_init__(self):
        if not isinstance(self.max_output_tokens, int) or self.max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be an integer >= 1, got {self.max_output_tokens!r}")
        if any(not isinstance(s, str) or not s for s in self.stop_sequences):
            raise ValueError(f"stop_sequences must be non-empty strings, got {list(self.stop_sequences)}")
        try:
            "".encode(self.detokenizer_encoding)
        except LookupError:
            raise ValueError(f"detokenizer_encoding must be a codec name, got {self.detokenizer_encoding!r}") from None


@dataclass
class StepRecord:
    """One selection step t: what the selector saw and what followed.

    raw_logits, processed_logits: [V]; cache_at_start: positions cached when t was
    selected; cache_after: per-layer lengths after the decode (None when none ran).
    """

    step: int
    cache_at_start: int
    raw_logits: np.ndarray
    processed_logits: np.ndarray
    selected: int
    delta_bytes: bytes | None
    cache_after: list[int] | None
    event_ids: list[str]

    @property
    def masked_ids(self) -> list[int]:
        return [int(i) for i in np.flatnonzero(~np.isfinite(self.processed_logits))]


@dataclass
class TextRun:
    config: TextTraceConfig
    tokenizer: Tokenizer
    rendered_text: str
    input_ids: np.ndarray
    prefill: object                      # labkit.nn.transformer.ForwardResult (attention kept)
    steps: list[StepRecord]
    finish_reason: str
    cache_final_length: int
    events: list[dict]

    @property
    def selected(self) -> list[int]:
        return [s.selected for s in self.steps]

    @property
    def returned_bytes(self) -> bytes:
        return b"".join(s.delta_bytes for s in self.steps if s.delta_bytes is not None)

    @property
    def text(self) -> str:
        """The returned text (decoded as UTF-8, as the client would)."""
        return self.returned_bytes.decode("utf-8", errors="replace")


def _top(row: np.ndarray, k: int = TOP_VALUES) -> list[list]:
    """[[id, value], …] of the k largest finite entries of a row [V], ties by lower ID."""
    finite = np.flatnonzero(np.isfinite(row))
    order = finite[np.argsort(-row[finite], kind="stable")][:k]
    return [[int(i), round(float(row[i]), 4)] for i in order]


def _logits_tensor(row: np.ndarray, position: int, *, stats: bool = True) -> dict:
    """A [1, V] logits summary: shape, dtype, position, stats (finite rows), top values."""
    summary = tensor_summary(row[None, :], position, stats=stats)
    summary["values"] = _top(row)
    return summary


def _ledger(result, *, prefill: bool) -> list[dict]:
    rows = []
    for layer in result.layers:
        entry = layer.ledger()
        if not prefill:
            entry = {k: entry[k] for k in ("layer", "Q", "K", "V", "score", "cache_K", "cache_V")}
        rows.append(entry)
    return rows


def run_text_trace(
    config: TextTraceConfig | None = None,
    *,
    processors: Mapping[str, Callable] | None = None,
    decode_step: Callable[[Decoder, KVCache, int], np.ndarray] | None = None,
) -> TextRun:
    """Run trace one under ``config`` (default: the fault-free fixture run).

    Two hooks let a reader's own piece run inside the real runtime (the check-yourself
    exercises use them); neither is a fault, and without them nothing changes:

    * ``processors`` — ``{name: fn}`` replaces processors by name, each
      ``fn(logits [V], context) -> logits [V]`` (see ``processors.resolve_processors``);
    * ``decode_step`` — ``fn(decoder, cache, token_id) -> logits [V]`` replaces the
      decoder's own cached step: it must feed ``token_id`` at position = cache length and
      append to ``cache``.  The runtime records the logits at that position and the cache
      lengths it finds afterwards; the per-layer shape ``ledger`` of ``decode.completed``
      is internal to the function and left out of the event.
    """
    config = config or TextTraceConfig()
    if not isinstance(config, TextTraceConfig):
        raise TypeError(f"config must be a TextTraceConfig, got {type(config).__name__}")
    processor_table = resolve_processors(processors)
    if decode_step is not None and not callable(decode_step):
        raise TypeError(f"decode_step must be a function (decoder, cache, token_id) -> logits, "
                        f"got {type(decode_step).__name__}")
    root = Path(config.fixtures_dir) if config.fixtures_dir else None
    tokenizer = Tokenizer.load(root)
    template = Template.load(root)
    weights = load_weights(root)
    if config.weight_perturbation is not None:
        weights = config.weight_perturbation.apply(weights)
    decoder = load_decoder(weights=weights, faults=config.decoder_faults)
    sampling = config.sampling
    eos = sampling.eos_id

    rec = TraceRecorder(config.trace_id, prefix="e")
    # -- phase A: fixed inputs ------------------------------------------------------
    rec.emit("gateway", "request.accepted", 0, {
        "request_id": config.request_id,
        "artifacts": {"model_id": CONFIG.model_id, "sampler": "greedy"},
        "max_output_tokens": config.max_output_tokens,
        "minimum_output_tokens": sampling.minimum_output_tokens,
        "stop_sequences": list(config.stop_sequences),
    })
    rendered = template.render(config.system, config.user)
    rec.emit("application", "context.rendered", 0, {
        "artifacts": {"template_id": rendered.template_id},
        "rendered_byte_length": rendered.byte_length,
    })
    enc = tokenizer.encode_batch_of_one(rendered.text)
    rec.emit("tokenizer", "input.tokenized", 0, {
        "artifacts": {"tokenizer_id": tokenizer.tokenizer_id},
        "input_ids": enc.input_ids,
        "attention_mask": enc.attention_mask,
        "position_ids": enc.position_ids,
        "tensors": {
            name: tensor_summary(getattr(enc, name), [0, enc.length - 1], digest=True)
            for name in ("input_ids", "attention_mask", "position_ids")
        },
    })
    rec.emit("scheduler", "prefill.started", 0, {
        "batch_slot": config.batch_slot, "logical_length": enc.length,
    })
    # -- phase B: prefill -------------------------------------------------------------
    prefill, cache = decoder.prefill(enc.input_ids, keep_attention=True)
    logits = prefill.next_logits[0]                                   # [V]
    rec.emit("model", "prefill.completed", 0, {
        "cache_length": cache.length,
        "cache": [{"layer": i, **shape, "positions": [0, cache.layer_length(i) - 1]}
                  for i, shape in enumerate(cache.shapes())],
        "embedding": prefill.embedding_shape,
        "ledger": _ledger(prefill, prefill=True),
        "tensors": {"raw_logits": _logits_tensor(logits, int(prefill.positions[-1]))},
    })
    logits_position = int(prefill.positions[-1])

    # -- selection steps (§7.4) -------------------------------------------------------------
    steps: list[StepRecord] = []
    selected: list[int] = []
    sequence_no = 0
    returned_text = b""
    finish_reason = "length"
    for step in range(1, config.max_output_tokens + 1):
        first_event = rec.next_event_id()
        cache_at_start = cache.length
        context = ProcessorContext(sampling, tuple(selected))
        processed = apply_processors(logits, context, processor_table)
        token = greedy_select(processed, sampling.tie_break)
        selected.append(token)
        record = StepRecord(step, cache_at_start, logits, processed, token, None, None, [])
        steps.append(record)
        rec.emit("decoder", "token.selected", step, {
            "step": step,
            "token_id": token,
            "reason": "greedy_argmax",
            "tie_break": sampling.tie_break,
            "processor_order": list(sampling.processor_order),
            "masked_ids": record.masked_ids,
            "cache_length": cache_at_start,
            "rng": {"counter_before": 0, "counter_after": 0},   # greedy draws no random numbers
            "tensors": {
                "raw_logits": _logits_tensor(logits, logits_position),
                "processed_logits": _logits_tensor(processed, logits_position, stats=False),
            },
        })
        if token == eos:
            finish_reason = "eos"
            record.event_ids = _ids_since(rec, first_event)
            break
        record.delta_bytes = tokenizer.piece_bytes(token, config.detokenizer_encoding)
        rec.emit("transport", "stream.delta", step, {
            "sequence_no": sequence_no,
            "token_id": token,
            "utf8_hex": record.delta_bytes.hex(),
            "byte_length": len(record.delta_bytes),
        })
        sequence_no += 1
        returned_text += record.delta_bytes
        hit_stop = any(returned_text.endswith(s.encode("utf-8")) for s in config.stop_sequences)
        if hit_stop or step == config.max_output_tokens:
            finish_reason = "stop" if hit_stop else "length"
            record.event_ids = _ids_since(rec, first_event)
            break
        rec.emit("scheduler", "decode.started", step, {
            "consuming": token, "position": cache.length, "cache_length": cache.length,
        })
        if decode_step is None:
            result = decoder.decode_step([token], cache)
            logits = result.next_logits[0]
            logits_position = int(result.positions[-1])
            ledger = _ledger(result, prefill=False)
        else:
            logits_position = cache.length            # the position the token is fed at
            logits = _checked_row(decode_step(decoder, cache, token), CONFIG.vocab_size)
            ledger = None
        record.cache_after = [cache.layer_length(i) for i in range(cache.n_layers)]
        completed = {
            "new_cache_length": cache.length,
            "cache_lengths": record.cache_after,
            "ledger": ledger,
            "tensors": {"raw_logits": _logits_tensor(logits, logits_position)},
        }
        if ledger is None:
            del completed["ledger"]
        rec.emit("model", "decode.completed", step, completed)
        record.event_ids = _ids_since(rec, first_event)

    # -- terminal events --------------------------------------------------------------------
    last = steps[-1].step
    rec.emit("scheduler", "generation.draining", last, {"finish_reason": finish_reason, "state": "DRAINING"})
    rec.emit("gateway", "response.completed", last, {
        "state": "FINISHED",
        "finish_reason": finish_reason,
        "sequence_no": sequence_no,
        "output_tokens_selected": len(selected),
        "output_tokens_returned": sequence_no,
        "utf8_hex": returned_text.hex(),
    })
    final_length = cache.length
    rec.emit("scheduler", "resources.released", last, {
        "batch_slot": config.batch_slot,
        "cache_final_length": final_length,
        "cache_lengths": [cache.layer_length(i) for i in range(cache.n_layers)],
    })
    return TextRun(config, tokenizer, rendered.text, enc.input_ids, prefill, steps,
                   finish_reason, final_length, rec.events)


def _checked_row(logits, vocab_size: int) -> np.ndarray:
    """A substituted decode step's output as one row [V] (a [1, V] or [1, 1, V] row is accepted)."""
    row = np.asarray(logits)
    if row.size != vocab_size or (row.ndim > 1 and any(n != 1 for n in row.shape[:-1])):
        raise ValueError(f"decode_step must return one row of logits [{vocab_size}], "
                         f"got shape {list(row.shape)}")
    return row.reshape(vocab_size)


def _ids_since(rec: TraceRecorder, first_event_id: str) -> list[str]:
    ids = [e["event_id"] for e in rec.events]
    return ids[ids.index(first_event_id):]
