"""Page 10's static figure: the tool-call scenarios side by side, readable at JupyterLab's
width (840 px of output, shown unscaled; no text under 8 pt, i.e. 11 px)."""

from __future__ import annotations

from matplotlib.patches import Patch

from labkit.reader.widgets.tools import _event_color as event_color

SCENARIO_FIGURE_SIZE = (8.4, 4.9)  # 840 × 490 px at 100 dpi: JupyterLab's output width, unscaled


def scenarios_figure(rows: list[tuple[str, list[dict]]], *, pyplot: bool = True):
    """One row per scenario at a size JupyterLab shows unscaled (every text 8 pt or more):
    each event a box numbered by its event ID and coloured by its state, the row's last
    event type and state under the scenario's name.  The exact events are printed below the
    figure on the page."""
    from labkit.reader import new_figure

    fig = new_figure(pyplot, SCENARIO_FIGURE_SIZE)
    ax = fig.add_subplot()
    longest = max(len(events) for _, events in rows)
    for row, (name, events) in enumerate(rows):
        y = -row
        last = events[-1]
        state = last["payload"].get("state", last["payload"].get("journal_state", "")) or ""
        ax.text(-0.75, y + 0.13, name, ha="right", va="center", fontsize=9)
        ax.text(
            -0.75, y - 0.2, f"ends: {state or last['event_type']}", ha="right", va="center", fontsize=8, color="#444444"
        )
        for i, event in enumerate(events):
            ax.text(
                i,
                y,
                event["event_id"].removeprefix("t"),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if event_color(event) == "#c44e52" else "#222222",
                bbox={
                    "boxstyle": "round,pad=0.3",
                    "facecolor": event_color(event),
                    "edgecolor": "#777777",
                    "linewidth": 0.6,
                },
            )
    ax.set_xlim(-0.6, longest - 0.4)
    ax.set_ylim(-len(rows) + 0.45, 0.55)
    ax.axis("off")
    shown = {event_color(e) for _, events in rows for e in events}
    legend = [
        Patch(facecolor=c, edgecolor="#777777", label=t)
        for c, t in (
            ("#dbe4f3", "before the commit"),
            ("#b9dfb9", "committed / side effect"),
            ("#f4b6b6", "failed, rejected or unknown"),
            ("#c44e52", "runtime crashed"),
        )
        if c in shown
    ]
    fig.legend(handles=legend, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("each scenario's events by ID (t00, t01, …), coloured by state", fontsize=9)
    return fig
