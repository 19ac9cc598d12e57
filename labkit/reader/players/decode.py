"""The decode stepper's data: a real ``TextRun`` (default: trace one, with ``fault``) token by token; a
kernel's ``request = {"fault": name | None}`` re-runs trace one with that fault (``labkit.text.faults``).

    data = {"player": "decode", "title": …, "pieces": [V str], "fault": None | name, "faults": [names],
            "steps": [{"step", "raw": [V] (4 dp), "masked": [ids], "processed": [V] (None = −∞),
                       "selected", "cache_start": [per layer], "cache_after": [per layer] | None,
                       "text": streamed so far, "finish": None | reason,
                       "events": [[event_id, event_type, "k=v …"]]}]}
"""

import itertools

from labkit.reader.players.data import one_of, r4, words
from labkit.reader.traces import event_fields
from labkit.text.faults import FAULTS
from labkit.trace.kinds import run_kind


def step_data(run, record, streamed: bytes) -> dict:
    """One selection step of ``run`` (a ``StepRecord``); ``streamed``: the text so far."""
    by_id = {e["event_id"]: e for e in run.events}
    ids = list(record.event_ids)
    last = record is run.steps[-1]
    if last:  # the terminal events follow the last selection
        order = list(by_id)
        ids += order[order.index(ids[-1]) + 1 :]
    return {
        "step": int(record.step),
        "raw": [r4(v) for v in record.raw_logits],
        "processed": [r4(v) for v in record.processed_logits],
        "masked": [int(i) for i in record.masked_ids],
        "selected": int(record.selected),
        "cache_start": [int(record.cache_at_start)] * len(run.prefill.layers),
        "cache_after": None if record.cache_after is None else [int(n) for n in record.cache_after],
        "text": streamed.decode("utf-8", errors="replace"),
        "finish": run.finish_reason if last else None,
        "events": [[i, by_id[i]["event_type"], event_fields(by_id[i])] for i in ids],
    }


def static_data(run=None, fault: str | None = None) -> dict:
    """The decode stepper's data for a ``labkit.text.runtime.TextRun``."""
    one_of("fault", fault, FAULTS, optional=True)
    run = run if run is not None else run_kind("text", fault)
    streamed = itertools.accumulate(record.delta_bytes or b"" for record in run.steps)  # the text so far
    steps = [step_data(run, record, text) for record, text in zip(run.steps, streamed, strict=True)]
    return {
        "title": words(
            "Trace one, token by token" + (f" — fault: {fault}" if fault else ""),
            "轨迹一，逐 token" + (f" — 失败注入：{fault}" if fault else ""),
        ),
        "pieces": list(run.tokenizer.pieces),
        "fault": fault,
        "faults": list(FAULTS),
        "steps": steps,
    }


def recompute(data: dict, request: dict) -> dict:
    return static_data(fault=request.get("fault") or None)
