"""Views of trace three: the grammar stepper with its static figure, the state machine
diagram, the prefix-reuse picture and event timelines.  (The scenario player,
``labkit.reader.players.scenarios``, replaces the old fault toggle.)

The grammar stepper and its static figure share one rendering function (``draw_grammar_step``).
ipywidgets and matplotlib are imported inside functions so importing them stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labkit.reader.stepper import StepperWidget
from labkit.tools.states import TRANSITIONS, State

SHOWN_ALLOWED = 10


@dataclass(frozen=True)
class GrammarStepView:
    """One proposal step: allowed IDs, the chosen piece, the JSON before and after it.

    raw_logits: [V]; allowed_ids: the grammar's allowed set at this step (1 = forced).
    """

    step: int  # 1-based
    n_steps: int
    allowed_ids: tuple[int, ...]
    chosen_id: int
    piece: str
    json_before: str
    json_after: str
    raw_logits: np.ndarray
    pieces: tuple[str, ...]

    @property
    def allowed_count(self) -> int:
        return len(self.allowed_ids)

    def best_allowed(self, k: int = SHOWN_ALLOWED) -> list[tuple[int, float]]:
        order = sorted(self.allowed_ids, key=lambda i: (-float(self.raw_logits[i]), i))[:k]
        return [(i, float(self.raw_logits[i])) for i in order]


def grammar_step_views(first_call) -> list[GrammarStepView]:
    """One view per decode step of mc_01 (a ``labkit.tools.calls.ModelCall``)."""
    from labkit.tools.tokenizer import vocabulary

    steps = first_call.decode.steps
    views, before = [], ""
    for s in steps:
        views.append(
            GrammarStepView(
                s.step + 1,
                len(steps),
                s.allowed_ids,
                s.chosen_id,
                s.piece,
                before,
                s.text_after,
                s.raw_logits,
                vocabulary(),
            )
        )
        before = s.text_after
    return views


def _label(piece: str) -> str:
    return piece if piece.strip() else repr(piece)


def draw_grammar_step(fig, view: GrammarStepView, all_counts: list[int] | None = None):
    """Best allowed raw logits (chosen highlighted), allowed-set sizes over the 27 steps, JSON so far."""
    grid = fig.add_gridspec(2, 2, height_ratios=(3, 1.2), width_ratios=(2.2, 1.4), hspace=0.7, wspace=0.35)
    ax = fig.add_subplot(grid[0, 0])
    best = view.best_allowed()
    ids = [i for i, _ in best]
    ax.barh(
        range(len(best)), [v for _, v in best], color=["#dd8452" if i == view.chosen_id else "#4c72b0" for i in ids]
    )
    ax.set_yticks(range(len(best)))
    ax.set_yticklabels([f"{i} {_label(view.pieces[i])}" for i in ids], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="#888888", linewidth=0.6)
    ax.set_xlabel("raw logit (allowed tokens only)")
    ax.set_title(
        f"step {view.step}/{view.n_steps}: {view.allowed_count} of {view.pieces.__len__()} tokens "
        f"allowed{' (forced)' if view.allowed_count == 1 else ''}",
        fontsize=9,
    )

    text_ax = fig.add_subplot(grid[0, 1])
    text_ax.axis("off")
    lines = ["chosen piece:", f"  {view.chosen_id} {_label(view.piece)}", "", "JSON so far:"]
    shown = view.json_after if view.json_after else "(empty)"
    lines += [shown[i : i + 28] for i in range(0, len(shown), 28)]
    text_ax.text(0, 1, "\n".join(lines), va="top", ha="left", fontsize=8)

    strip = fig.add_subplot(grid[1, :])
    counts = all_counts or [view.allowed_count]
    xs = np.arange(1, len(counts) + 1)
    strip.bar(xs, counts, color=["#dd8452" if x == view.step else "#9aa9c9" for x in xs])
    strip.set_yscale("log")
    strip.set_xlim(0.4, len(counts) + 0.6)
    strip.set_xlabel("proposal step")
    strip.set_ylabel("allowed", fontsize=8)
    return fig


class GrammarStepper(StepperWidget):
    """Step through the 27 proposal tokens of mc_01.

    State for tests: ``step`` (1-based, settable), ``view``, ``allowed_label.value``,
    ``chosen_label.value``, ``json_label.value``; ``forward()`` / ``back()`` move one step
    (clamped).  ``images=False`` skips the PNG rendering.
    """

    figure_size = (9, 4.6)

    def __init__(self, first_call, step: int = 1, images: bool = True):
        views = grammar_step_views(first_call)
        self.counts = [v.allowed_count for v in views]
        super().__init__(views, step, images)

    def labels(self, w) -> list:
        self.allowed_label = w.Label()
        self.chosen_label = w.Label()
        self.json_label = w.Label()
        return [self.allowed_label, self.chosen_label, self.json_label]

    def describe(self, v: GrammarStepView) -> None:
        self.allowed_label.value = f"allowed: {v.allowed_count} tokens" + (" (forced)" if v.allowed_count == 1 else "")
        self.chosen_label.value = f"chosen: {v.chosen_id} {_label(v.piece)}"
        self.json_label.value = f"JSON so far: {v.json_after}"

    def draw(self, figure, view: GrammarStepView) -> None:
        draw_grammar_step(figure, view, self.counts)

    def picture_state(self, view: GrammarStepView):
        return tuple(self.counts)


def grammar_stepper(step: int = 1) -> GrammarStepper:
    """The widget on the real mc_01 decode (stored weights)."""
    from labkit.tools.runtime import run_tool_trace

    return GrammarStepper(run_tool_trace().first_call, step)


def grammar_step_figure(first_call, step: int = 1):
    """The static figure of the stepper's state at ``step`` (default: its initial state)."""
    from labkit.reader import plt

    pyplot = plt()
    views = grammar_step_views(first_call)
    fig = pyplot.figure(figsize=(9, 4.6))
    return draw_grammar_step(fig, views[step - 1], [v.allowed_count for v in views])


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
