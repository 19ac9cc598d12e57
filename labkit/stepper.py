"""A step-through widget: back/next buttons over a list of precomputed step views.

The decode stepper (trace one) and the grammar stepper (trace three) are both this: a
list of views computed once from a real run, labels that describe the current view, and a
picture drawn by the same function as the page's static figure.  Subclasses add their
labels (``labels``) and fill them (``describe``); the base keeps the step, the buttons and a
per-step PNG cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


class StepperWidget:
    """State for tests: ``step`` (1-based, settable), ``view``, ``step_label.value``;
    ``forward()`` / ``back()`` move one step, clamped.  ``images=False`` skips the PNGs."""

    #: size of the rendered picture, in inches
    figure_size: tuple[float, float] = (8.0, 3.6)

    def __init__(self, views: Sequence, step: int = 1, images: bool = True):
        import ipywidgets as w

        if not views:
            raise ValueError("a stepper needs at least one step view")
        self.views = list(views)
        self.images = images
        self._pngs: dict[int, bytes] = {}
        self.back_button = w.Button(description="◀ back", layout=w.Layout(width="90px"))
        self.forward_button = w.Button(description="next ▶", layout=w.Layout(width="90px"))
        self.step_label = w.Label()
        self.image = w.Image(format="png")
        self.back_button.on_click(lambda _: self.back())
        self.forward_button.on_click(lambda _: self.forward())
        self.widget = w.VBox([w.HBox([self.back_button, self.forward_button, self.step_label]),
                              *self.labels(w), self.image, *self.trailing(w)])
        self._step = 0
        self.step = step

    # -- what a subclass provides -------------------------------------------------------
    def labels(self, widgets) -> list:
        """Widgets shown between the buttons and the picture."""
        return []

    def trailing(self, widgets) -> list:
        """Widgets shown below the picture."""
        return []

    def describe(self, view) -> None:
        """Fill the labels for ``view``."""

    def draw(self, figure, view) -> None:
        """Draw ``view`` onto ``figure`` (the same drawing as the static figure)."""
        raise NotImplementedError

    # -- stepping -------------------------------------------------------------------------
    @property
    def n_steps(self) -> int:
        return len(self.views)

    @property
    def step(self) -> int:
        return self._step

    @step.setter
    def step(self, value: int) -> None:
        import numpy as np

        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= self.n_steps:
            raise ValueError(f"step must be an integer in [1, {self.n_steps}], got {value!r}")
        if int(value) == self._step:
            return
        self._step = int(value)
        self._refresh()

    @property
    def view(self):
        return self.views[self._step - 1]

    def forward(self) -> int:
        self.step = min(self._step + 1, self.n_steps)
        return self._step

    def back(self) -> int:
        self.step = max(self._step - 1, 1)
        return self._step

    def _refresh(self) -> None:
        self.step_label.value = f"step {self._step} of {self.n_steps}"
        self.describe(self.view)
        self.back_button.disabled = self._step == 1
        self.forward_button.disabled = self._step == self.n_steps
        if self.images:
            if self._step not in self._pngs:
                self._pngs[self._step] = render_png(lambda fig: self.draw(fig, self.view), self.figure_size)
            self.image.value = self._pngs[self._step]

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def render_png(draw: Callable, size: tuple[float, float]) -> bytes:
    """Draw onto a detached figure in the book style and return its PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from labkit.reader import figure_png, use_book_style

    use_book_style()
    figure = Figure(figsize=size)
    FigureCanvasAgg(figure)
    draw(figure)
    return figure_png(figure)
