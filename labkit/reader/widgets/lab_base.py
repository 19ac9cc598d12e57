"""The front-end plumbing every chapter-11 lab widget shares.

A lab widget is a *state* (plain NumPy, computed by the labs' own functions), a *drawing
function* ``draw(state, figure)``, and an ipywidgets box whose picture is that drawing
rendered to PNG.  ``WidgetView`` holds the box, draws the state through
``labkit.reader.new_figure`` (the same book style as the static cells, pixel for pixel the
static figure) and the book's one PNG renderer (``labkit.reader.png``), and shows bad input
as a message instead of a traceback.  Every PNG drawn is kept in that renderer's cache under
a digest of the drawing function, the size and the state, so a state shown before is shown
again without drawing.  Nothing here imports matplotlib or ipywidgets at module level.

A subclass builds its controls in its ``__init__`` and hands them to ``self._assemble(...)``,
which adds ``message`` (an ``ipywidgets.HTML``) and ``image`` (an ``ipywidgets.Image``) and
builds ``box``; its ``update`` calls ``self._show(...)`` (or ``self._draw(...)``).
"""

from __future__ import annotations

import re
from html import escape

from labkit.reader import new_figure
from labkit.reader.png import content_key, figure_png, render

__all__ = ["LIVE_CAPTION", "WidgetView", "static_figure", "widget_bundle"]

LIVE_CAPTION = (
    "<span style='font-size:90%;color:#555'><b style='color:#2a7a2a'>● live</b> — "
    "move the controls; the figure after this widget is its default state, drawn once "
    "(the one the static book shows)</span>"
)

#: what a widget's stored output says where it cannot be drawn (a page not run yet, an
#: untrusted notebook, the static book): one line, never the ipywidgets repr
RUN_THE_PAGE = "run the page to use this widget"


def widget_bundle(box, title: str, **kwargs) -> dict:
    """``box``'s Jupyter mime bundle with its text form replaced by ``title — run the page…``."""
    bundle = box._repr_mimebundle_(**kwargs)
    data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
    data["text/plain"] = f"{title} — {RUN_THE_PAGE}"
    return data


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
        return widget_bundle(self.framed(), self.title, **kwargs)

    @property
    def title(self) -> str:
        """The widget's name in its stored text form (``MarginCurve`` → "margin curve")."""
        return re.sub(r"(?<!^)(?=[A-Z])", " ", type(self).__name__).lower()

    _framed = None

    def framed(self):
        """The box under a one-line caption that tells the live widget from the static
        figure the page shows after it (the static book shows only that figure)."""
        if self._framed is None:
            import ipywidgets as widgets

            self._framed = widgets.VBox([widgets.HTML(LIVE_CAPTION), self.box])
        return self._framed

    def _assemble(self, controls, shown=None) -> None:
        """Finish the box: ``shown`` (default: the ``controls``, one under another) above the
        message line and the picture; an edit of any control calls ``update``, run once now."""
        import ipywidgets as widgets

        self.message = widgets.HTML()
        self.image = widgets.Image(format="png")
        for control in controls:
            control.observe(self.update, names="value")
        self.box = widgets.VBox([*(controls if shown is None else shown), self.message, self.image])
        self.update()

    def _draw(self, draw, state, size: tuple[float, float] | None = None) -> None:
        """Render ``draw(state, figure)`` on a detached book-style figure into ``image``."""
        if not self.render:
            return
        size = size or self.size
        key = content_key(draw.__module__, draw.__qualname__, size, state)
        self.image.value = render(key, lambda: self._render(draw, state, size))
        self.image.layout.display = None  # shown again once the input is good

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
                return figure_png(figure, live=True)
        figure = new_figure(False, size)
        draw(state, figure)
        png = figure_png(figure, live=True)  # lays the figure out while drawing it
        self._layout = (
            draw,
            size,
            [ax.get_position().frozen() for ax in figure.axes],
            None if figure._suptitle is None else figure._suptitle.get_position(),
        )
        return png

    def _show(self, compute, draw, describe, size: tuple[float, float] | None = None) -> None:
        """``state = compute()``, its one-line ``describe(state)`` and its picture; bad input
        (a ValueError) is shown as a message and the previous state and picture stay."""
        try:
            state = compute()
        except ValueError as exc:
            self._refuse(exc)
            return
        self.state, self.error = state, None
        self.message.value = describe(state)
        self._draw(draw, state, size)

    def _refuse(self, exc: Exception) -> None:
        """Show why the input cannot be drawn.  The previous state stays, but its picture is
        hidden: beside the error it would look like the drawing of the refused input."""
        self.error = str(exc)
        if self.image is not None:
            self.image.layout.display = "none"
        self.message.value = f"<b>cannot draw:</b> {escape(str(exc))}"


def static_figure(draw, state, size: tuple[float, float] = (9.0, 3.4)):
    """``draw(state, figure)`` on a pyplot figure in the book style: a widget's static cell."""
    figure = new_figure(True, size)
    draw(state, figure)
    return figure
