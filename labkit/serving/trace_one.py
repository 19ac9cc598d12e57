"""Trace one as one request among many: the batch of issue 45.

``run_batch()`` runs trace one (joins at step 0) with two other requests of the same model through the
continuous-batching engine on a paged cache: ``long`` (a 20-token prompt, joins at step 1, takes trace one's
first block as a shared prefix and is prefilled in chunks) and ``late`` (joins at step 2, shares ``long``'s
first two blocks, and is the one preempted when blocks run out, then recomputed).  Each request's events are
recorded by the runtime's own steps (``labkit.text.runtime``) fed with the batch's results, so trace one's can
be compared with the solo run's event by event.
"""

from dataclasses import dataclass, field

import numpy as np

from labkit.core.events import TraceRecorder
from labkit.nn import Decoder
from labkit.nn.transformer import ForwardResult
from labkit.serving.engine import Engine, Request, StepReport
from labkit.serving.paged import BlockPool
from labkit.text import runtime as phases
from labkit.text.config import TextRun, TextTraceConfig
from labkit.text.model import CONFIG, load_weights
from labkit.text.processors import resolve_processors
from labkit.text.template import Template
from labkit.text.tokenizer import Tokenizer

#: the other two requests: (request_id, user text, max_output_tokens, joins at step)
OTHERS = (
    ("req-long", "天空是蓝色。短波蓝光的散射通常更强。天空为什么是蓝色？", 2, 1),
    ("req-late", "天空是蓝色。为什么？", 5, 2),
)
CAPACITY, BLOCK_SIZE, TOKEN_BUDGET = 10, 4, 12
#: |batched − solo| bound on a raw logit: float32 GEMMs over another number of rows (batch.py)
LOGIT_TOLERANCE = 1e-5


@dataclass
class _Given:
    """Stands in for the decoder and its cache in the runtime's steps: it hands over the batch's result
    for this request and reports the cache as the runtime reads it (length, per-layer shapes)."""

    result: ForwardResult | None = None
    length: int = 0
    n_layers: int = CONFIG.n_layers

    def prefill(self, input_ids, keep_attention=False):
        self.length = int(self.result.positions[-1]) + 1
        return self.result, self

    def decode_step(self, token_ids, cache):
        self.length += 1
        return self.result

    def layer_length(self, layer: int) -> int:
        return self.length

    def shapes(self) -> list[dict]:
        shape = [1, CONFIG.n_kv_heads, self.length, CONFIG.head_dim]
        return [{"K": shape, "V": shape} for _ in range(self.n_layers)]


@dataclass
class TraceOneClient:
    """A request's runtime, one event group per batch result: prefill, then decode → select → stream;
    ``(result) -> (token, finished)``, as the engine asks its clients.  Every request selects through it;
    only trace one's events are a trace (the others' prefill event sees only their last chunk)."""

    config: TextTraceConfig
    tokenizer: Tokenizer
    template: Template
    run: TextRun = field(init=False)

    def __post_init__(self):
        rec = TraceRecorder(self.config.trace_id, prefix="e")
        self.run = TextRun(self.config, rec, self.tokenizer, self.template, _Given(), resolve_processors())
        phases.request_events(self.run)

    def __call__(self, result: ForwardResult) -> tuple[int, bool]:
        run = self.run
        run.decoder.result = result
        if run.cache is None:  # trace one's prompt comes in one chunk (never chunked, never shared): the solo e04
            phases.prefill_event(run)
        else:
            phases.decode_token(run, run.steps[-1])
        step = len(run.steps) + 1
        record = phases.select_token(run, step)
        if record.selected != self.config.sampling.eos_id:
            phases.stream_token(run, record)
        going = run.finish_reason == "length" and step < self.config.max_output_tokens
        if not going:
            phases.terminal_events(run)
        return record.selected, not going

    @property
    def selected(self) -> list[int]:
        return self.run.selected

    @property
    def logits(self) -> list[np.ndarray]:
        return [s.raw_logits for s in self.run.steps]


@dataclass
class BatchRun:
    reports: list[StepReport]
    requests: dict[str, Request]
    clients: dict[str, TraceOneClient]
    pool: BlockPool

    @property
    def events(self) -> list[dict]:
        """Trace one's events, recorded inside the batch (its client is the first)."""
        return next(iter(self.clients.values())).run.events

    def cost_rows(self) -> list[dict]:
        """The cost model, one row per engine step: tokens fed (the budget's use), chunks,
        blocks in use of the capacity, preemptions and who left."""
        return [
            {
                "step": r.step,
                "tokens": sum(n for _, _, n in r.chunks),
                "chunks": [f"{rid}:{start}+{n}" for rid, start, n in r.chunks],
                "blocks_in_use": r.blocks_in_use,
                "capacity": self.pool.capacity,
                "preempted": r.preempted,
                "finished": r.finished,
            }
            for r in self.reports
        ]


def other_config(request_id: str, user: str, max_output_tokens: int) -> TextTraceConfig:
    return TextTraceConfig(request_id=request_id, user=user, max_output_tokens=max_output_tokens)


def run_batch(
    capacity: int = CAPACITY,
    block_size: int = BLOCK_SIZE,
    token_budget: int = TOKEN_BUDGET,
    *,
    trace_config: TextTraceConfig | None = None,
    root=None,
    audit: bool = True,
    on_step=None,
) -> BatchRun:
    """Trace one (``trace_config``: a variant of it, e.g. a client that disconnects) and ``OTHERS``
    through one engine until all leave; ``audit``: check the pool's invariants after every step;
    ``on_step(engine, report)`` sees each step (tests, a player)."""
    trace_config = TextTraceConfig() if trace_config is None else trace_config
    template = Template.load(root)
    trace_one = TraceOneClient(trace_config, Tokenizer.load(root, trace_config.vocabulary), template)
    clients, joins = {trace_config.request_id: trace_one}, {trace_config.request_id: 0}
    for request_id, user, max_tokens, step in OTHERS:  # their prompts in toy-tokenizer-v1 (a split one decodes only)
        clients[request_id] = TraceOneClient(other_config(request_id, user, max_tokens), Tokenizer.load(root), template)
        joins[request_id] = step
    decoder = Decoder(CONFIG, load_weights(root))
    pool = BlockPool(capacity, block_size, CONFIG.n_layers, CONFIG.n_kv_heads, CONFIG.head_dim, CONFIG.dtype)
    engine, requests, reports = Engine(decoder, pool, token_budget), {}, []
    while engine.steps == 0 or not engine.idle or len(requests) < len(clients):
        for request_id in [r for r, step in joins.items() if step == engine.steps]:
            prompt = clients[request_id].run.input_ids[0].tolist()
            requests[request_id] = Request(request_id, prompt, clients[request_id])
            engine.add(requests[request_id])
        reports.append(engine.step())
        if audit:
            pool.audit([r.table for r in requests.values()])
        if on_step is not None:
            on_step(engine, reports[-1])
    return BatchRun(reports, requests, clients, pool)
