"""Static views of trace one: event lines, the first logits and the prefill attention.

The decode stepper is a player now (``labkit.reader.players.decode``, drawn in the browser);
these are the page figures.  matplotlib is imported inside functions so importing stays cheap.
"""

from __future__ import annotations

import numpy as np

#: the discrete payload fields worth a glance, per event type (tensors are left out);
#: the decode player shows the same (``labkit.reader.players.decode``)
EVENT_FIELDS = {
    "token.selected": ("step", "token_id", "reason", "cache_length"),
    "stream.delta": ("sequence_no", "token_id", "utf8_hex"),
    "decode.started": ("consuming", "position", "cache_length"),
    "decode.completed": ("new_cache_length", "cache_lengths"),
    "prefill.completed": ("cache_length",),
}


def event_fields(event: dict) -> str:
    """``step=1 token_id=14 …``: an event's artifacts and key discrete fields."""
    payload = event["payload"]
    keys = EVENT_FIELDS.get(event["event_type"], [k for k in payload if k not in ("tensors", "artifacts")])
    parts = [f"{k}={v}" for k, v in payload.get("artifacts", {}).items()]
    parts += [f"{k}={payload[k]}" for k in keys if k in payload]
    return " ".join(parts)


def event_line(event: dict) -> str:
    """``e05 token.selected  step=1 token_id=14 …``: key discrete fields (and raw top logits)."""
    fields = event_fields(event).strip()
    raw = event["payload"].get("tensors", {}).get("raw_logits")
    if raw is not None and event["event_type"] != "token.selected":
        fields += f" raw_top={raw['values']}"
    return f"{event['event_id']} {event['event_type']}  {fields}".rstrip()


def draw_logits(ax, view, pieces) -> None:
    """Bars of raw logits [V] of one selection step (a ``StepRecord``); masked tokens hatched grey
    and marked −∞; the selection highlighted."""
    ids = np.arange(view.raw_logits.size)
    masked = set(view.masked_ids)
    colors = ["#c8c8c8" if i in masked else "#4c72b0" for i in ids]
    colors[view.selected] = "#dd8452"
    bars = ax.bar(ids, view.raw_logits, color=colors, edgecolor="#555555", linewidth=0.5)
    for i in masked:
        bars[i].set_hatch("///")
        top = max(view.raw_logits[i], 0.0)
        ax.text(i, top + 0.15, "−∞", ha="center", va="bottom", fontsize=7, color="#777777")
    allowed = [i for i in ids if i not in masked]
    ax.plot(allowed, view.processed_logits[allowed], "k_", markersize=9, label="processed logit")
    ax.axhline(0, color="#888888", linewidth=0.6)
    ax.set_xticks(ids)
    ax.set_xticklabels([f"{i} {p}" for i, p in zip(ids, pieces, strict=True)], rotation=90, fontsize=7)
    ax.set_ylabel("raw logit")
    low = min(-3.0, float(np.min(view.raw_logits)) - 0.3)
    ax.set_ylim(low, float(np.max(view.raw_logits)) + 1.0)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Line2D(
                [], [], color="k", marker="_", linestyle="none", markersize=9, label="processed (= raw where allowed)"
            ),
            Patch(facecolor="#4c72b0", label="raw (allowed)"),
            Patch(facecolor="#c8c8c8", hatch="///", label="masked → −∞"),
            Patch(facecolor="#dd8452", label=f"selected: {view.selected} {pieces[view.selected]}"),
        ],
        fontsize=7,
        loc="upper left",
        frameon=False,
    )


def plot_first_logits(run=None):
    """Step 1's raw logits with the masked tokens shown as masked."""
    from labkit.reader import plt

    pyplot = plt()
    if run is None:
        from labkit.text.runtime import run_text_trace

        run = run_text_trace()
    fig, ax = pyplot.subplots(figsize=(7.5, 3.4))
    draw_logits(ax, run.steps[0], run.tokenizer.pieces)
    ax.set_title("step 1: raw logits of next_logits [1, 20]", fontsize=9)
    fig.subplots_adjust(bottom=0.3)
    return fig
