"""The front-end plumbing every chapter-11 lab widget shares.

A lab widget is a *state* (plain NumPy, computed by the labs' own functions), a *drawing
function* ``draw(state, figure)``, and an ipywidgets box whose picture is that drawing
rendered to PNG.  ``WidgetView`` holds the box, draws the state through
``labkit.reader.new_figure`` / ``figure_png`` (the same book style as the static cells), and
shows bad input as a message instead of a traceback.  Nothing here imports matplotlib or
ipywidgets at module level.

A subclass builds ``box``, ``image`` (an ``ipywidgets.Image``) and, if it refuses input,
``message`` (an ``ipywidgets.HTML``) in its ``__init__``, then calls ``self._draw(...)``
from its ``update``.
"""

from __future__ import annotations

from html import escape

from labkit.reader import figure_png, new_figure

__all__ = ["WidgetView"]


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
        return self.box._repr_mimebundle_(**kwargs)

    def _draw(self, draw, state, size: tuple[float, float] | None = None) -> None:
        """Render ``draw(state, figure)`` on a detached book-style figure into ``image``."""
        if not self.render:
            return
        figure = new_figure(False, size or self.size)
        draw(state, figure)
        self.image.value = figure_png(figure)

    def _refuse(self, exc: Exception) -> None:
        """Show why the input cannot be drawn; the previous state and picture stay."""
        self.error = str(exc)
        self.message.value = f"<b>cannot draw:</b> {escape(str(exc))}"
