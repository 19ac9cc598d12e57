"""Seeing a first divergence: two timelines, the first differing event highlighted.

``draw_timelines`` renders one comparison onto a figure; the static page calls it on the
default choice and ``DivergenceExplorer`` (a kind and a fault picker) renders the same
drawing to PNG whenever the choice changes.
"""

from __future__ import annotations

from html import escape

from labkit.reader import new_figure
from labkit.reader.png import figure_png
from labkit.trace import catalogue
from labkit.trace.divergence import Divergence, first_divergence

DEFAULT = ("text", "perturbed_weight")


def compare(kind: str, fault: str) -> tuple[list[dict], list[dict], Divergence | None]:
    """The golden trace of ``kind``, a run with ``fault``, and their first divergence."""
    golden = catalogue.golden(kind)
    faulty = catalogue.run(kind, fault)
    return golden, faulty, first_divergence(golden, faulty)


def draw_timelines(kind: str = DEFAULT[0], fault: str = DEFAULT[1], *, pyplot: bool = True):
    """Golden (top) and faulty (bottom) event sequences; the first divergence in red,
    the events after it (its consequences, not new causes) faded."""
    golden, faulty, found = compare(kind, fault)
    split = found.index if found else max(len(golden), len(faulty))
    width = max(7.0, 0.32 * max(len(golden), len(faulty)) + 1.5)
    fig = new_figure(pyplot, (width, 3.4))
    ax = fig.add_subplot()
    for row, (label, trace) in enumerate((("golden", golden), (fault, faulty))):
        y = 1 - row
        for i, event in enumerate(trace):
            if i < split:
                color, alpha = "#4c72b0", 1.0
            elif i == split:
                color, alpha = "#c44e52", 1.0
            else:
                color, alpha = "#999999", 0.45
            ax.scatter(i, y, s=70, color=color, alpha=alpha, zorder=3)
            ax.annotate(event["event_id"], (i, y), textcoords="offset points", xytext=(0, 8 if row == 0 else -14),
                        ha="center", fontsize=7, alpha=alpha)
        ax.plot(range(len(trace)), [y] * len(trace), color="#cccccc", zorder=1)
        ax.text(-1.0, y, label, ha="right", va="center", fontsize=9)
    if found:
        ax.axvline(found.index, color="#c44e52", linestyle=":", zorder=0)
        type_a = found.event_a["event_type"] if found.event_a else "(no event)"
        type_b = found.event_b["event_type"] if found.event_b else "(no event)"
        for y, text in ((1, type_a), (0, type_b)):
            ax.annotate(text, (found.index, y), textcoords="offset points", xytext=(6, -3 if y else 4),
                        ha="left", fontsize=8, color="#c44e52")
        ax.set_title(f"{kind} / {fault}\nfirst divergence at event #{found.index} — rule: {found.rule}",
                     fontsize=10)
    else:
        ax.set_title(f"{kind} / {fault}: identical traces", fontsize=10)
    ax.set_ylim(-0.7, 1.7)
    ax.set_xlim(-1.2, max(len(golden), len(faulty)))
    ax.set_yticks([])
    ax.set_xlabel("event index")
    for side in ("left", "top", "right"):
        ax.spines[side].set_visible(False)
    return fig


class DivergenceExplorer:
    """Pick a trace kind and a fault; see both timelines and the diagnosis."""

    def __init__(self, kind: str = DEFAULT[0], fault: str = DEFAULT[1], *, render: bool = True):
        import ipywidgets as w

        self.render = render
        self.kind_picker = w.Dropdown(options=list(catalogue.KINDS), value=kind, description="trace")
        self.fault_picker = w.Dropdown(options=list(catalogue.faults(kind)), value=fault, description="fault")
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.summary_label = w.HTML()
        self.divergence: Divergence | None = None
        self._switching = False
        self.kind_picker.observe(self._on_kind, names="value")
        self.fault_picker.observe(self._on_fault, names="value")
        self.widget = w.VBox([w.HBox([self.kind_picker, self.fault_picker]), self.image, self.summary_label])
        self._update()

    @property
    def kind(self) -> str:
        return self.kind_picker.value

    @property
    def fault(self) -> str:
        return self.fault_picker.value

    def _on_kind(self, change) -> None:
        names = list(catalogue.faults(change["new"]))
        self._switching = True
        try:
            self.fault_picker.options = names
            self.fault_picker.value = names[0]
        finally:
            self._switching = False
        self._update()

    def _on_fault(self, change) -> None:
        if not self._switching and change["new"] is not None:
            self._update()

    def _update(self) -> None:
        _, _, self.divergence = compare(self.kind, self.fault)
        fault = catalogue.faults(self.kind)[self.fault]
        description = escape(fault.description)
        if self.divergence is None:
            body = "identical traces"
        else:
            verdict = "as declared" if fault.expected.matches(self.divergence.at) else "NOT as declared"
            lines = [*self.divergence.describe().splitlines(), f"declared: {fault.expected} ({verdict})"]
            body = "<br>".join(escape(line) for line in lines)
        self.summary_label.value = f"<b>{description}</b><pre>{body}</pre>"
        if self.render:
            self.image.value = figure_png(draw_timelines(self.kind, self.fault, pyplot=False))

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def divergence_explorer(kind: str = DEFAULT[0], fault: str = DEFAULT[1], *, render: bool = True) -> DivergenceExplorer:
    return DivergenceExplorer(kind, fault, render=render)
