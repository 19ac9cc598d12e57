"""The decode stepper: trace one, token by token (raw logits, masks, choice, cache, events).

``decode_data(run)`` turns a real ``TextRun`` into the player's data; ``decode_player()``
is the live widget, whose fault picker re-runs trace one with the named fault.

    data = {"player": "decode", "title": …, "pieces": [V str], "fault": None | name,
            "faults": [names] (live only),
            "steps": [{"step", "raw": [V] (4 dp), "masked": [ids], "processed": [V] (None = −∞),
                       "selected", "cache_start": [per layer], "cache_after": [per layer] | None,
                       "text": streamed so far, "finish": None | reason,
                       "events": [[event_id, event_type, "k=v …"]]}]}
"""

from __future__ import annotations

from labkit.reader.players.base import Player, r4_list
from labkit.reader.widgets.text import event_fields


def decode_data(run, fault: str | None = None) -> dict:
    """The decode stepper's data for a ``labkit.text.runtime.TextRun``."""
    by_id = {e["event_id"]: e for e in run.events}
    order = [e["event_id"] for e in run.events]
    n_layers = len(run.prefill.layers)
    steps, streamed = [], b""
    for record in run.steps:
        ids = list(record.event_ids)
        last = record is run.steps[-1]
        if last:  # the terminal events follow the last selection
            ids += order[order.index(ids[-1]) + 1 :]
        if record.delta_bytes is not None:
            streamed += record.delta_bytes
        steps.append(
            {
                "step": int(record.step),
                "raw": r4_list(record.raw_logits),
                "processed": r4_list(record.processed_logits),
                "masked": [int(i) for i in record.masked_ids],
                "selected": int(record.selected),
                "cache_start": [int(record.cache_at_start)] * n_layers,
                "cache_after": None if record.cache_after is None else [int(n) for n in record.cache_after],
                "text": streamed.decode("utf-8", errors="replace"),
                "finish": run.finish_reason if last else None,
                "events": [[i, by_id[i]["event_type"], event_fields(by_id[i])] for i in ids],
            }
        )
    return {
        "player": "decode",
        "title": "Trace one, token by token" + (f" — fault: {fault}" if fault else ""),
        "pieces": list(run.tokenizer.pieces),
        "fault": fault,
        "steps": steps,
    }


def text_run(fault: str | None = None):
    """Trace one, correct or with a named fault (``labkit.text.faults``)."""
    from labkit.text.faults import faulty_config
    from labkit.text.runtime import run_text_trace

    return run_text_trace(None if fault is None else faulty_config(fault))


class DecodePlayer(Player):
    """The decode stepper in a kernel; ``request = {"fault": name | None}`` re-runs trace one."""

    player = "decode"
    title = "Decode stepper (trace one, token by token)"

    def recompute(self, request: dict) -> dict:
        from labkit.text.faults import FAULTS

        fault = request.get("fault") or None
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"fault must be one of {list(FAULTS)} or None, got {fault!r}")
        return live_decode_data(text_run(fault), fault)


def live_decode_data(run, fault: str | None = None) -> dict:
    from labkit.text.faults import FAULTS

    return {**decode_data(run, fault), "faults": list(FAULTS)}


def decode_player(run=None, fault: str | None = None) -> DecodePlayer:
    """The live decode stepper over ``run`` (default: trace one with ``fault``, None = correct)."""
    return DecodePlayer(live_decode_data(run if run is not None else text_run(fault), fault))


def static_data() -> dict:
    """What the static book embeds: the correct trace one (no fault picker without a kernel)."""
    return decode_data(text_run(None))
