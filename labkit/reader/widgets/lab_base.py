"""The front-end plumbing every chapter-11 lab widget shares.

A lab widget is a *state* (plain NumPy, computed by the labs' own functions), a *drawing
function* ``draw(state, figure)``, and an ipywidgets box whose picture is that drawing
rendered to PNG.  ``WidgetView`` holds the box, draws the state through
``labkit.reader.new_figure`` (the same book style as the static cells, pixel for pixel the
static figure) and ``labkit.reader.stepper.live_png``, and shows bad input as a message instead of a traceback.
Every PNG drawn is kept under a digest of the drawing function, the size and the state
(``labkit.reader.stepper.render_png``'s cache), so a state shown before is shown again without drawing.  Nothing here imports matplotlib or
ipywidgets at module level.

A subclass builds ``box``, ``image`` (an ``ipywidgets.Image``) and, if it refuses input,
``message`` (an ``ipywidgets.HTML``) in its ``__init__``, then calls ``self._draw(...)``
from its ``update``.
"""

from __future__ import annotations

from html import escape

from labkit.reader import new_figure
from labkit.reader.stepper import cached_png, content_key, live_png, remember_png

__all__ = ["LIVE_CAPTION", "WidgetView"]

LIVE_CAPTION = ("<span style='font-size:90%;color:#555'><b style='color:#2a7a2a'>● live</b> — "
                "move the controls; the figure after this widget is its default state, drawn once "
                "(the one the static book shows)</span>")


class WidgetView:
    """Displays as its ipywidgets ``box``; ``image.value`` holds the PNG of the current state.

    ``render=False`` keeps the state in step with the controls but draws nothing (fast, for
    tests); ``error`` is the last refused input's message, ``None`` while the input is good.
    """

    box = None
    image = None
    message = None
    error: str | None = None
    render: bool = True
    #: figure size in inches when ``_draw`` is given none
    size: tuple[float, float] = (9.0, 3.4)

    def _repr_mimebundle_(self, **kwargs):
        return self.framed()._repr_mimebundle_(**kwargs)

    _framed = None

    def framed(self):
        """The box under a one-line caption that tells the live widget from the static
        figure the page shows after it (the static book shows only that figure)."""
        if self._framed is None:
            import ipywidgets as widgets

            self._framed = widgets.VBox([widgets.HTML(LIVE_CAPTION), self.box])
        return self._framed

    def _draw(self, draw, state, size: tuple[float, float] | None = None) -> None:
        """Render ``draw(state, figure)`` on a detached book-style figure into ``image``."""
        if not self.render:
            return
        import labkit.reader.stepper as stepper

        size = size or self.size
        key = content_key(draw.__module__, draw.__qualname__, size, state)
        png = cached_png(key)
        if png is None:
            png = self._render(draw, state, size)
            stepper.RENDERS += 1
            if key is not None:
                remember_png(key, png)
        self.image.value = png
        self.image.layout.display = None           # shown again once the input is good

    #: (drawing, size, axes positions, suptitle position) of this widget's first picture
    _layout = None

    def _render(self, draw, state, size) -> bytes:
        """PNG of ``draw(state, figure)``.  The first picture of a widget is laid out by the
        book's constrained layout (so it equals the static figure pixel for pixel); later
        pictures with the same axes reuse that layout instead of solving it again, which
        halves the drawing time of a new state.  A picture with other axes is laid out afresh."""
        memo = self._layout
        if memo is not None and memo[:2] == (draw, size):
            figure = new_figure(False, size)
            figure.set_layout_engine("none")
            draw(state, figure)
            if len(figure.axes) == len(memo[2]):
                for ax, position in zip(figure.axes, memo[2], strict=True):
                    ax.set_position(position)
                if figure._suptitle is not None and memo[3] is not None:
                    figure._suptitle.set_position(memo[3])
                return live_png(figure)
        figure = new_figure(False, size)
        draw(state, figure)
        png = live_png(figure)                     # lays the figure out while drawing it
        self._layout = (draw, size, [ax.get_position().frozen() for ax in figure.axes],
                        None if figure._suptitle is None else figure._suptitle.get_position())
        return png

    def _refuse(self, exc: Exception) -> None:
        """Show why the input cannot be drawn.  The previous state stays, but its picture is
        hidden: beside the error it would look like the drawing of the refused input."""
        self.error = str(exc)
        if self.image is not None:
            self.image.layout.display = "none"
        self.message.value = f"<b>cannot draw:</b> {escape(str(exc))}"
