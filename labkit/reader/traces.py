"""The traces' static page figures, drawn by matplotlib (the steppers are players): trace one's event
lines and first logits, trace three's state machine, prefix reuse and scenarios side by side."""

import numpy as np

from labkit.tools.states import TRANSITIONS, State

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


def plot_first_logits(run):
    """Step 1's raw logits [V] of ``run`` (a ``labkit.text.runtime.TextRun``): masked tokens hatched
    grey and marked −∞, the processed logit where allowed, the selection highlighted."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from labkit.reader import plt

    view, pieces = run.steps[0], run.tokenizer.pieces
    fig, ax = plt().subplots(figsize=(7.5, 3.4))
    ids = np.arange(view.raw_logits.size)
    masked = set(view.masked_ids)
    colors = ["#c8c8c8" if i in masked else "#4c72b0" for i in ids]
    colors[view.selected] = "#dd8452"
    bars = ax.bar(ids, view.raw_logits, color=colors, edgecolor="#555555", linewidth=0.5)
    for i in masked:
        bars[i].set_hatch("///")
        ax.text(i, max(view.raw_logits[i], 0.0) + 0.15, "−∞", ha="center", va="bottom", fontsize=7, color="#777777")
    allowed = [i for i in ids if i not in masked]
    ax.plot(allowed, view.processed_logits[allowed], "k_", markersize=9)
    ax.axhline(0, color="#888888", linewidth=0.6)
    ax.set_xticks(ids)
    ax.set_xticklabels([f"{i} {p}" for i, p in zip(ids, pieces, strict=True)], rotation=90, fontsize=7)
    ax.set_ylabel("raw logit")
    ax.set_ylim(min(-3.0, float(np.min(view.raw_logits)) - 0.3), float(np.max(view.raw_logits)) + 1.0)
    handles = [
        Line2D([], [], color="k", marker="_", linestyle="none", markersize=9, label="processed (= raw where allowed)"),
        Patch(facecolor="#4c72b0", label="raw (allowed)"),
        Patch(facecolor="#c8c8c8", hatch="///", label="masked → −∞"),
        Patch(facecolor="#dd8452", label=f"selected: {view.selected} {pieces[view.selected]}"),
    ]
    ax.legend(handles=handles, fontsize=7, loc="upper left", frameon=False)
    ax.set_title("step 1: raw logits of next_logits [1, 20]", fontsize=9)
    fig.subplots_adjust(bottom=0.3)
    return fig


# -- trace three: the state machine --------------------------------------------------------
# the happy row (the enum's first eight states, PROPOSED … OBSERVED) at y = 0, the failures around it
_LAYOUT = {state: (x, 0) for x, state in enumerate(list(State)[:8])} | {
    State.PARSE_REJECTED: (1, -1.3),
    State.VALIDATION_REJECTED: (2, 1.3),
    State.AUTHORIZATION_DENIED: (3, -1.3),
    State.CONFIRMATION_REJECTED: (3.6, 1.3),
    State.CANCELLED: (4.4, -1.3),
    State.NOT_COMMITTED: (5, -1.6),
    State.OUTCOME_UNKNOWN: (6, 1.3),
    State.FAILED: (4.2, -2.6),
}


def _boxed(ax, x: float, y: float, text: str, fontsize: float, bbox: dict, **style) -> None:
    """``text`` centred at (x, y) in a rounded box (``bbox``: its pad, colours and line width)."""
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, bbox={"boxstyle": "round", **bbox}, **style)


def draw_state_machine(ax, path: list[str] | None = None) -> None:
    """Every legal transition as an arrow; the states and moves of ``path`` highlighted."""
    visited = set(path or [])
    moves = set(zip(path or [], (path or [])[1:], strict=False))
    for source, targets in TRANSITIONS.items():
        for target in targets:
            (x0, y0), (x1, y1) = _LAYOUT[source], _LAYOUT[target]
            on = (source.value, target.value) in moves
            bend = "arc3,rad=0.15" if y0 != y1 or x1 < x0 else "arc3"
            line = {"color": "#dd8452", "lw": 2.0} if on else {"color": "#b0b0b0", "lw": 0.8}
            arrow = {"arrowstyle": "-|>", "shrinkA": 22, "shrinkB": 22, "connectionstyle": bend, **line}
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops=arrow)
    for state, (x, y) in _LAYOUT.items():
        failure = y != 0
        face = "#f6d5c3" if state.value in visited else ("#f2f2f2" if failure else "#dbe4f3")
        edge = "#dd8452" if state.value in visited else "#777777"
        _boxed(ax, x, y, state.value.replace("_", "_\n"), 6.5, {"pad": 0.35, "facecolor": face, "edgecolor": edge})
    ax.set_xlim(-0.7, 7.7)
    ax.set_ylim(-3.1, 1.9)
    ax.axis("off")


def draw_prefix_reuse(ax, second_call, answer_tokens: int) -> None:
    """Positions of mc_02: reused from mc_01's cache, prefilled now, then generated."""
    reused, total = second_call.reused_prefix_tokens, second_call.input_token_count
    parts = [
        (0, reused, "#4c72b0", f"reused from mc_01's cache: {reused}"),
        (reused, total - reused, "#dd8452", f"prefilled in mc_02: {total - reused}"),
        (total, answer_tokens, "#55a868", f"generated answer: {answer_tokens}"),
    ]
    for start, width, color, label in parts:
        ax.barh(0, width, left=start, color=color, label=label, edgecolor="white")
        ax.text(start + width / 2, 0, str(width), ha="center", va="center", color="white", fontsize=9)
    for x in (reused, total):
        ax.axvline(x, color="#333333", linewidth=0.8, linestyle=":")
    ax.set_yticks([])
    ax.set_xlabel("position in mc_02")
    ax.set_xlim(0, total + answer_tokens)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=3, fontsize=8, frameon=False)


# -- trace three: its events coloured by state (the states off the happy row have failed) --------
FAILED_STATES = {state.value for state, (_, y) in _LAYOUT.items() if y != 0}
#: the colours ``event_color`` gives, and what each says (the scenarios figure's legend)
EVENT_COLOURS = {
    "#dbe4f3": "before the commit",
    "#b9dfb9": "committed / side effect",
    "#f4b6b6": "failed, rejected or unknown",
    "#c44e52": "runtime crashed",
}


def event_color(event: dict) -> str:
    payload = event["payload"]
    state = payload.get("state", payload.get("journal_state"))
    if event["event_type"].startswith("runtime.crashed"):
        return "#c44e52"
    if state in FAILED_STATES:
        return "#f4b6b6"
    if state in ("COMMITTED", "OBSERVED") or payload.get("side_effect") is True:
        return "#b9dfb9"
    return "#dbe4f3"


SCENARIO_FIGURE_SIZE = (8.4, 4.9)  # 840 × 490 px at 100 dpi: JupyterLab's output width, unscaled


def scenarios_figure(rows: list[tuple[str, list[dict]]]):
    """One row per scenario at a size JupyterLab shows unscaled (every text 8 pt or more): each event a
    box numbered by its event ID and coloured by its state, the row's last event type and state under
    the scenario's name (the page prints the exact events below it)."""
    from matplotlib.patches import Patch

    from labkit.reader.style import plt

    fig = plt().figure(figsize=SCENARIO_FIGURE_SIZE, layout="constrained")
    ax = fig.add_subplot()
    longest = max(len(events) for _, events in rows)
    for row, (name, events) in enumerate(rows):
        y = -row
        last = events[-1]
        state = last["payload"].get("state", last["payload"].get("journal_state", "")) or ""
        ax.text(-0.75, y + 0.13, name, ha="right", va="center", fontsize=9)
        ends = f"ends: {state or last['event_type']}"
        ax.text(-0.75, y - 0.2, ends, ha="right", va="center", fontsize=8, color="#444444")
        for i, event in enumerate(events):
            colour = event_color(event)
            bbox = {"pad": 0.3, "facecolor": colour, "edgecolor": "#777777", "linewidth": 0.6}
            text_colour = "white" if colour == "#c44e52" else "#222222"
            _boxed(ax, i, y, event["event_id"].removeprefix("t"), 8, bbox, color=text_colour)
    ax.set_xlim(-0.6, longest - 0.4)
    ax.set_ylim(-len(rows) + 0.45, 0.55)
    ax.axis("off")
    shown = {event_color(e) for _, events in rows for e in events}
    legend = [Patch(facecolor=c, edgecolor="#777777", label=t) for c, t in EVENT_COLOURS.items() if c in shown]
    fig.legend(handles=legend, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("each scenario's events by ID (t00, t01, …), coloured by state", fontsize=9)
    return fig
