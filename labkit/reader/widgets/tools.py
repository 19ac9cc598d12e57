"""Figures of trace three: the state machine diagram, the prefix-reuse picture and the event
colours the scenario view uses.  (The grammar stepper and the scenario player are players:
``labkit.reader.players.grammar``, ``labkit.reader.players.scenarios``.)
"""

from __future__ import annotations

from labkit.tools.states import TRANSITIONS, State

# -- the state machine ------------------------------------------------------------------
_LAYOUT = {
    State.PROPOSED: (0, 0),
    State.PARSED: (1, 0),
    State.VALIDATED: (2, 0),
    State.AUTHORIZED: (3, 0),
    State.PREPARED: (4, 0),
    State.EXECUTING: (5, 0),
    State.COMMITTED: (6, 0),
    State.OBSERVED: (7, 0),
    State.PARSE_REJECTED: (1, -1.3),
    State.VALIDATION_REJECTED: (2, 1.3),
    State.AUTHORIZATION_DENIED: (3, -1.3),
    State.CONFIRMATION_REJECTED: (3.6, 1.3),
    State.CANCELLED: (4.4, -1.3),
    State.NOT_COMMITTED: (5, -1.6),
    State.OUTCOME_UNKNOWN: (6, 1.3),
    State.FAILED: (4.2, -2.6),
}


def draw_state_machine(ax, path: list[str] | None = None) -> None:
    """Every legal transition as an arrow; the states and moves of ``path`` highlighted."""
    visited = set(path or [])
    moves = set(zip(path or [], (path or [])[1:], strict=False))
    for source, targets in TRANSITIONS.items():
        for target in targets:
            (x0, y0), (x1, y1) = _LAYOUT[source], _LAYOUT[target]
            on = (source.value, target.value) in moves
            ax.annotate(
                "",
                xy=(x1, y1),
                xytext=(x0, y0),
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": "#dd8452" if on else "#b0b0b0",
                    "lw": 2.0 if on else 0.8,
                    "shrinkA": 22,
                    "shrinkB": 22,
                    "connectionstyle": "arc3,rad=0.15" if y0 != y1 or x1 < x0 else "arc3",
                },
            )
    for state, (x, y) in _LAYOUT.items():
        failure = y != 0
        face = "#f6d5c3" if state.value in visited else ("#f2f2f2" if failure else "#dbe4f3")
        ax.text(
            x,
            y,
            state.value.replace("_", "_\n"),
            ha="center",
            va="center",
            fontsize=6.5,
            bbox={
                "boxstyle": "round,pad=0.35",
                "facecolor": face,
                "edgecolor": "#dd8452" if state.value in visited else "#777777",
            },
        )
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


# -- event timelines ------------------------------------------------------------------------
_FAILED_STATES = {
    "PARSE_REJECTED",
    "VALIDATION_REJECTED",
    "AUTHORIZATION_DENIED",
    "CONFIRMATION_REJECTED",
    "CANCELLED",
    "NOT_COMMITTED",
    "OUTCOME_UNKNOWN",
    "FAILED",
}


def _event_color(event: dict) -> str:
    payload = event["payload"]
    state = payload.get("state", payload.get("journal_state"))
    if event["event_type"].startswith("runtime.crashed"):
        return "#c44e52"
    if state in _FAILED_STATES:
        return "#f4b6b6"
    if state in ("COMMITTED", "OBSERVED") or payload.get("side_effect") is True:
        return "#b9dfb9"
    return "#dbe4f3"
