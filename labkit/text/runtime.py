"""Trace one, run for real (§7.2–7.5): template → tokens → prefill → processors → greedy → decode → EOS.

``run_text_trace`` drives ``STEPS`` through ``labkit.core.runtime.run_steps``.  The step-start convention of
§7.3–7.4 holds throughout: when token t is selected the cache still holds 12 + t − 1 positions; a decode then
feeds y_t at position = cache length; EOS ends the generation without a decode.  ``logical_step`` is 0 for
e00–e04, t for the events of selection step t, and the last step for the terminal events.
"""

from pathlib import Path

import numpy as np

from labkit.core.events import TraceRecorder, tensor_summary, top_values
from labkit.core.runtime import checked_run_arguments, run_steps
from labkit.nn import Decoder
from labkit.text.config import TOP_VALUES, StepRecord, TextHooks, TextRun, TextTraceConfig
from labkit.text.model import CONFIG, load_weights
from labkit.text.processors import ProcessorContext, apply_processors, greedy_select, resolve_processors
from labkit.text.streamer import Streamer
from labkit.text.template import Template
from labkit.text.tokenizer import Tokenizer


def _logits_tensor(row: np.ndarray, position: int, *, stats: bool = True) -> dict:
    """A [1, V] logits summary: shape, dtype, position, stats (finite rows), top values."""
    return tensor_summary(row[None, :], position, stats=stats) | {"values": top_values(row, TOP_VALUES)}


def _ledger(result, *, prefill: bool) -> list[dict]:
    """Each layer's shapes; a decode step records only those of attention and the cache."""
    rows = [layer.ledger() for layer in result.layers]
    decoded = ("layer", "Q", "K", "V", "score", "cache_K", "cache_V")
    return rows if prefill else [{k: row[k] for k in decoded} for row in rows]


def run_text_trace(
    config: TextTraceConfig | None = None, hooks: TextHooks | None = None, *, root: str | Path | None = None
) -> TextRun:
    """Run trace one under ``config`` (default: the fault-free fixture run), a reader's ``hooks`` inside it;
    ``root``: the folder of trace one's fixtures (default ``fixtures/text``)."""
    config, hooks = checked_run_arguments(config, hooks, TextTraceConfig, TextHooks)
    tokenizer, template = Tokenizer.load(root, config.vocabulary), Template.load(root)
    weights = load_weights(root)
    if config.weight_perturbation is not None:
        weights = config.weight_perturbation.apply(weights)
    decoder = Decoder(CONFIG, weights, config.decoder_faults)
    rec = TraceRecorder(config.trace_id, prefix="e")
    run = TextRun(config, rec, tokenizer, template, decoder, resolve_processors(hooks.processors), hooks.decode_step)
    run_steps(STEPS, run)
    return run


def request_events(run: TextRun) -> None:
    """e00–e03, the fixed inputs: request accepted, context rendered, input tokenized, prefill scheduled."""
    config, rec, tokenizer, template = run.config, run.rec, run.tokenizer, run.template
    accepted = {
        "request_id": config.request_id,
        "artifacts": {"model_id": CONFIG.model_id, "sampler": "greedy"},
        "max_output_tokens": config.max_output_tokens,
        "minimum_output_tokens": config.sampling.minimum_output_tokens,
        "stop_sequences": list(config.stop_sequences),
    }
    rec.emit("gateway", "request.accepted", 0, accepted)
    rendered = run.rendered_text = template.render(config.system, config.user)
    rendered_length = len(rendered.encode("utf-8"))
    rendered_payload = {"artifacts": {"template_id": template.template_id}, "rendered_byte_length": rendered_length}
    rec.emit("application", "context.rendered", 0, rendered_payload)
    enc = tokenizer.encode_batch_of_one(rendered)
    run.input_ids = enc.input_ids
    names = ("input_ids", "attention_mask", "position_ids")
    tokenized = {
        "artifacts": {"tokenizer_id": tokenizer.tokenizer_id},
        **{n: getattr(enc, n) for n in names},
        "tensors": {n: tensor_summary(getattr(enc, n), [0, enc.length - 1], digest=True) for n in names},
    }
    rec.emit("tokenizer", "input.tokenized", 0, tokenized)
    rec.emit("scheduler", "prefill.started", 0, {"batch_slot": config.batch_slot, "logical_length": enc.length})


def prefill_event(run: TextRun) -> None:
    """e04: one forward pass over the prompt fills the cache and gives the first logits [V]."""
    prefill, cache = run.prefill, run.cache = run.decoder.prefill(run.input_ids, keep_attention=True)
    run.logits, run.position = prefill.next_logits[0], int(prefill.positions[-1])  # [V] and its position
    layers = [
        {"layer": i, **shape, "positions": [0, cache.layer_length(i) - 1]} for i, shape in enumerate(cache.shapes())
    ]
    completed = {
        "cache_length": cache.length,
        "cache": layers,
        "embedding": prefill.embedding_shape,
        "ledger": _ledger(prefill, prefill=True),
        "tensors": {"raw_logits": _logits_tensor(run.logits, run.position)},
    }
    run.rec.emit("model", "prefill.completed", 0, completed)


def generate(run: TextRun) -> None:
    """e05…: token by token, select, stream and (unless the text ended) decode, until EOS, a stop, an
    abort or max_output_tokens; each step's ledger keeps the IDs of its events."""
    config = run.config
    for step in range(1, config.max_output_tokens + 1):
        first_event = len(run.events)
        record = select_token(run, step)
        if record.selected != config.sampling.eos_id:  # EOS ends the text unstreamed
            stream_token(run, record)
        going = run.finish_reason == "length" and step < config.max_output_tokens
        if going:
            decode_token(run, record)
        record.event_ids = [e["event_id"] for e in run.events[first_event:]]
        if not going:
            break


def select_token(run: TextRun, step: int) -> StepRecord:
    """token.selected: the processors in their configured order, then greedy selection (§7.4)."""
    config, selected = run.config, tuple(s.selected for s in run.steps)
    sampling, counted = config.sampling, len(selected) + int(config.eos_mask_counts_pending_token)  # told at the seam
    processed = apply_processors(run.logits, ProcessorContext(sampling, selected, counted), run.processors)
    token = greedy_select(processed, sampling.tie_break)
    record = StepRecord(step, run.cache.length, run.logits, processed, token, None, None, [])
    run.steps.append(record)
    chosen = {
        "step": step,
        "token_id": token,
        "reason": "greedy_argmax",
        "tie_break": sampling.tie_break,
        "processor_order": list(sampling.processor_order),
        "masked_ids": record.masked_ids,
        "cache_length": record.cache_at_start,
        "rng": {"counter_before": 0, "counter_after": 0},  # greedy draws no random numbers
        "tensors": {
            "raw_logits": _logits_tensor(run.logits, run.position),
            "processed_logits": _logits_tensor(processed, run.position, stats=False),
        },
    }
    run.rec.emit("decoder", "token.selected", step, chosen)
    if token == sampling.eos_id:
        run.finish_reason = "eos"
    return record


def stream_token(run: TextRun, record: StepRecord) -> None:
    """stream.delta: the token's bytes pass the streamer (the UTF-8 wait and the stop hold-back,
    ``labkit.text.streamer``) and what it releases goes to the client; a stop it matches ends the text;
    a client that disconnects (``disconnect_after_deltas``) aborts the request."""
    config, rec = run.config, run.rec
    run.streamer = run.streamer or Streamer(config.stop_sequences)
    out = run.streamer.push(run.tokenizer.piece_bytes(record.selected))  # the vocabulary's UTF-8 bytes
    record.delta_bytes = out.text.encode(config.detokenizer_encoding)
    kept = {"held_back": out.held_back, "pending_utf8_hex": out.pending.hex()}
    if record.delta_bytes:  # a streamer that can keep text back records what it keeps (trace one's cannot)
        can_hold = config.stop_sequences or run.tokenizer.splits_characters
        _send(run, record.step, record.selected, record.delta_bytes, kept if can_hold else {})
    elif out.stop is None:  # every byte of this token is held or pending: nothing is sent
        rec.emit("transport", "stream.held", record.step, {"token_id": record.selected, **kept})
    if out.stop is not None:
        discarded = out.discarded.encode("utf-8").hex()
        stop = {"stop_sequence": out.stop, "token_id": record.selected, "discarded_utf8_hex": discarded}
        rec.emit("detokenizer", "stop.matched", record.step, stop)
        run.finish_reason = "stop"
    elif record.delta_bytes and run.sequence_no == config.disconnect_after_deltas:
        rec.emit("transport", "client.disconnected", record.step, {"after_sequence_no": run.sequence_no - 1})
        run.finish_reason = "abort"
    else:
        run.finish_reason = "length"


def _send(run: TextRun, step: int, token_id: int | None, data: bytes, kept: dict) -> None:
    """One stream.delta to the client, numbered 0, 1, 2, …"""
    payload = {"sequence_no": run.sequence_no, "token_id": token_id, "utf8_hex": data.hex(), "byte_length": len(data)}
    run.rec.emit("transport", "stream.delta", step, payload | kept)
    run.sequence_no += 1
    run.returned_bytes += data


def decode_token(run: TextRun, record: StepRecord) -> None:
    """decode.started/completed: feed y_t at position = cache length; the next logits [V]
    (``hooks.decode_step``, when given, computes them instead of the decoder's cached step)."""
    cache, token, rec = run.cache, record.selected, run.rec
    started = {"consuming": token, "position": cache.length, "cache_length": cache.length}
    rec.emit("scheduler", "decode.started", record.step, started)
    if run.decode_step is None:
        result = run.decoder.decode_step([token], cache)
        run.logits, run.position = result.next_logits[0], int(result.positions[-1])
        ledger = {"ledger": _ledger(result, prefill=False)}
    else:
        run.position = cache.length  # the position the token is fed at
        run.logits = _checked_row(run.decode_step(run.decoder, cache, token), CONFIG.vocab_size)
        ledger = {}  # a substituted decode step reports none
    record.cache_after = [cache.layer_length(i) for i in range(cache.n_layers)]
    completed = {"new_cache_length": cache.length, "cache_lengths": record.cache_after, **ledger}
    completed["tensors"] = {"raw_logits": _logits_tensor(run.logits, run.position)}
    rec.emit("model", "decode.completed", record.step, completed)


def terminal_events(run: TextRun) -> None:
    """Draining (after the flush of held text), the completed response, and the released resources;
    an aborted request drains nothing and sends nothing more, and its resources are released all the same."""
    config, rec, last, cache = run.config, run.rec, run.steps[-1].step, run.cache
    if run.finish_reason == "abort":
        aborted = {
            "state": "ABORTED",
            "finish_reason": run.finish_reason,
            "sequence_no": run.sequence_no,
            "output_tokens_selected": len(run.steps),
            "utf8_hex": run.returned_bytes.hex(),
        }
        rec.emit("gateway", "request.aborted", last, aborted)
    else:
        if run.finish_reason in ("eos", "length") and run.streamer is not None:  # send the held text
            flushed = run.streamer.finish().text.encode(config.detokenizer_encoding)
            if flushed:
                _send(run, last, None, flushed, {"held_back": "", "pending_utf8_hex": ""})
        rec.emit("scheduler", "generation.draining", last, {"finish_reason": run.finish_reason, "state": "DRAINING"})
        completed = {
            "state": "FINISHED",
            "finish_reason": run.finish_reason,
            "sequence_no": run.sequence_no,
            "output_tokens_selected": len(run.steps),
            "output_tokens_returned": run.sequence_no,
            "utf8_hex": run.returned_bytes.hex(),
        }
        rec.emit("gateway", "response.completed", last, completed)
    lengths = [cache.layer_length(i) for i in range(cache.n_layers)]
    released = {"batch_slot": config.batch_slot, "cache_final_length": cache.length, "cache_lengths": lengths}
    rec.emit("scheduler", "resources.released", last, released)  # on every path, exactly once


def _checked_row(logits, vocab_size: int) -> np.ndarray:
    """A substituted decode step's output as one row [V] (a [1, V] or [1, 1, V] row is accepted)."""
    row = np.asarray(logits)
    if row.size != vocab_size or (row.ndim > 1 and any(n != 1 for n in row.shape[:-1])):
        raise ValueError(f"decode_step must return one row of logits [{vocab_size}], got shape {list(row.shape)}")
    return row.reshape(vocab_size)


#: the steps of a run, in event order (``run_text_trace`` runs them)
STEPS = (request_events, prefill_event, generate, terminal_events)
