"""Trace one's configuration (§7.2; a fault is another config, ``labkit.text.faults``), the hooks a reader's
function plugs into, and the run its steps share (``labkit.text.runtime``)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labkit.core.events import TraceRecorder
from labkit.core.runtime import Config, Hooks, hook
from labkit.nn import DecoderFaults
from labkit.text.model import WeightPerturbation
from labkit.text.processors import SamplingConfig
from labkit.text.streamer import Streamer
from labkit.text.template import Template
from labkit.text.tokenizer import Tokenizer

TOP_VALUES = 3


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
    #: the vocabulary file in the fixture folder (``toy-tokenizer-v1-split.json``: a byte-level variant)
    vocabulary: str = "tokenizer.json"
    #: the client disconnects after this many deltas (None: it reads to the end)
    disconnect_after_deltas: int | None = None
    #: a fault of the runtime's count: the token about to be selected is counted as selected too
    #: (the processors are told ``counted`` = selected + 1, so a minimum length lifts one step early)
    eos_mask_counts_pending_token: bool = False

    def __post_init__(self):
        if not isinstance(self.max_output_tokens, int) or self.max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be an integer >= 1, got {self.max_output_tokens!r}")
        if any(not isinstance(s, str) or not s for s in self.stop_sequences):
            raise ValueError(f"stop_sequences must be non-empty strings, got {list(self.stop_sequences)}")
        disconnect = self.disconnect_after_deltas
        if disconnect is not None and not (isinstance(disconnect, int) and disconnect >= 1):
            raise ValueError(f"disconnect_after_deltas must be an integer >= 1 or None, got {disconnect!r}")
        try:
            "".encode(self.detokenizer_encoding)
        except LookupError:
            raise ValueError(f"detokenizer_encoding must be a codec name, got {self.detokenizer_encoding!r}") from None


@dataclass(frozen=True)
class TextHooks(Hooks):
    """Substitutes for pieces of ``run_text_trace`` (the exercises use them); ``None`` keeps the library's."""

    #: replaces logits processors by name (``processors.resolve_processors``), run in the configured order
    processors: Mapping[str, Callable] | None = hook(
        "a mapping {processor name: function (logits [V], context) -> logits [V]}"
    )
    #: replaces the decoder's cached step: feed ``token_id`` at position = cache length, append to ``cache``;
    #: the runtime records the logits and the cache lengths after it (no per-layer ``ledger``)
    decode_step: Callable | None = hook("a function (decoder, cache, token_id) -> logits [V]")

    def _acceptable(self, name: str, value: Any) -> bool:
        return isinstance(value, Mapping) if name == "processors" else callable(value)


@dataclass
class StepRecord:
    """One selection step t: raw and processed logits [V]; cache_at_start: positions cached when t was
    selected; cache_after: per-layer lengths after the decode (None when none ran)."""

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
    """One run: what its steps share while it runs and what it leaves (events, prefill, ledger, bytes)."""

    config: TextTraceConfig
    rec: TraceRecorder = field(repr=False)
    tokenizer: Tokenizer = field(repr=False)
    template: Template = field(repr=False)
    decoder: Any = field(repr=False)  # labkit.nn.Decoder, or what stands in for it (labkit.serving)
    processors: Mapping[str, Callable] = field(repr=False)  # the processor table, the reader's included
    decode_step: Callable | None = field(default=None, repr=False)  # TextHooks.decode_step
    events: list[dict] = field(init=False)  # the recorder's
    rendered_text: str = ""
    input_ids: np.ndarray | None = None
    prefill: Any = None  # labkit.nn.transformer.ForwardResult (attention kept)
    cache: Any = field(default=None, repr=False)  # labkit.nn.KVCache
    logits: np.ndarray | None = field(default=None, repr=False)  # [V], the logits the next selection reads
    position: int = 0  # the position those logits belong to
    steps: list[StepRecord] = field(default_factory=list)
    finish_reason: str = "length"
    returned_bytes: bytes = b""  # every delta sent, the final flush included
    sequence_no: int = 0  # deltas sent so far
    streamer: Streamer | None = field(default=None, repr=False)  # made at the first streamed token

    def __post_init__(self):
        self.events = self.rec.events

    @property
    def cache_final_length(self) -> int:
        return self.cache.length

    @property
    def selected(self) -> list[int]:
        return [s.selected for s in self.steps]

    @property
    def text(self) -> str:
        """The returned text (decoded as UTF-8, as the client would)."""
        return self.returned_bytes.decode("utf-8", errors="replace")
