"""A step-through widget: back/next buttons over a list of precomputed step views.

The decode stepper (trace one) and the grammar stepper (trace three) are both this: a
list of views computed once from a real run, labels that describe the current view, and a
picture drawn by the same function as the page's static figure.  Subclasses add their
labels (``labels``) and fill them (``describe``); the base keeps the step and the buttons.

Pictures go through ``labkit.reader.png.render_png``, which keeps the PNG of every state it
has drawn (keyed by the drawing and the state's content, not by the widget), so a revisit —
or the same step in a second widget over the same run — shows the stored PNG without drawing.
After a button press inside a Jupyter kernel, the neighbouring steps are drawn ahead while
the kernel is idle (``schedule_prefetch``), so stepping on shows a stored PNG.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from labkit.core.guards import is_integer
from labkit.reader.png import cached_png, content_key, render_png


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
        self.back_button = w.Button(description="◀ back", layout=w.Layout(width="90px"))
        self.forward_button = w.Button(description="next ▶", layout=w.Layout(width="90px"))
        self.step_label = w.Label()
        self.image = w.Image(format="png")
        self.back_button.on_click(lambda _: self._clicked(self.back))
        self.forward_button.on_click(lambda _: self._clicked(self.forward))
        self.widget = w.VBox(
            [
                w.HBox([self.back_button, self.forward_button, self.step_label]),
                *self.labels(w),
                self.image,
                *self.trailing(w),
            ]
        )
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

    def picture_state(self, view):
        """Everything besides ``view`` that the picture depends on (part of the PNG cache key)."""
        return None

    # -- stepping -------------------------------------------------------------------------
    @property
    def n_steps(self) -> int:
        return len(self.views)

    @property
    def step(self) -> int:
        return self._step

    @step.setter
    def step(self, value: int) -> None:

        if not is_integer(value) or not 1 <= value <= self.n_steps:
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
            self.image.value = self._picture(self._step)

    def _picture_key(self, step: int):
        view = self.views[step - 1]
        return content_key(
            type(self).__module__, type(self).__qualname__, self.figure_size, view, self.picture_state(view)
        )

    def _picture(self, step: int) -> bytes:
        view = self.views[step - 1]
        return render_png(lambda fig: self.draw(fig, view), self.figure_size, key=self._picture_key(step))

    # -- drawing ahead while the reader looks ------------------------------------------------
    def _clicked(self, move: Callable[[], int]) -> None:
        """A button press: move, then draw the neighbouring steps once the kernel is idle."""
        move()
        self.schedule_prefetch()

    def schedule_prefetch(self) -> bool:
        """Ask the running event loop (a Jupyter kernel's) to draw the pictures of the steps
        next to the current one when it is idle, one picture per callback, so that the next
        press shows a stored PNG.  Returns False (and does nothing) outside an event loop or
        with ``images=False``; a press during a prefetch waits for at most one picture."""
        import asyncio

        if not self.images:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        loop.call_soon(self._prefetch_one)
        return True

    def neighbours(self) -> list[int]:
        """The steps drawn ahead: the next one first, then the previous one."""
        return [s for s in (self._step + 1, self._step - 1) if 1 <= s <= self.n_steps]

    def _prefetch_one(self) -> None:
        for step in self.neighbours():
            if cached_png(self._picture_key(step)) is None:
                self._picture(step)
                self.schedule_prefetch()  # the other neighbour in a later callback
                return

    def _repr_mimebundle_(self, **kwargs):
        from labkit.reader.widgets.lab_base import widget_bundle

        return widget_bundle(self.widget, type(self).__name__, **kwargs)
