"""The kernel side of every player: an ``anywidget.AnyWidget`` with one synced ``data`` dict.

``data`` is exactly what the static book's ``{anywidget}`` directive carries as its JSON
body (``{"data": …}``), so the module cannot tell the two hosts apart.  ``live`` tells the
module that a kernel is listening: it then offers the controls that need a new computation
(a fault picker, a setting) and writes the reader's choice into ``request``; the Python side
re-runs the real computation (``recompute``) and sets ``data`` again.

Numbers go through ``r4`` (float32 values at most four decimals, the book's output policy).
"""

from __future__ import annotations

import math

import anywidget
import traitlets

from labkit.reader.players.bundle import bundle


def r4(value) -> float | None:
    """A float rounded to 4 decimals (None for ±∞/NaN: drawn as masked)."""
    value = float(value)
    if not math.isfinite(value):
        return None
    rounded = round(value, 4)
    return 0.0 if rounded == 0 else rounded


def r4_list(values) -> list[float | None]:
    """``r4`` over a flat sequence (an array is flattened first)."""
    import numpy as np

    return [r4(v) for v in np.asarray(values, dtype=np.float64).ravel()]


class Player(anywidget.AnyWidget):
    """One player in a live kernel.  Subclasses set ``player`` (its module name), ``title``
    and ``recompute(request) -> data``."""

    player = "player"
    title = "player"
    data = traitlets.Dict().tag(sync=True)
    live = traitlets.Bool(True).tag(sync=True)
    request = traitlets.Dict().tag(sync=True)

    def __init_subclass__(cls, **kwargs):
        if "player" in cls.__dict__:
            cls._esm = bundle(cls.player)
        super().__init_subclass__(**kwargs)

    def __init__(self, data: dict, **kwargs):
        super().__init__(data=data, **kwargs)
        self.observe(self._on_request, names="request")

    def _on_request(self, change) -> None:
        new = change["new"]
        if new:
            self.data = self.recompute(dict(new))

    def recompute(self, request: dict) -> dict:
        """New data for the reader's ``request`` (a fault, a setting); default: unchanged."""
        return self.data

    def __repr__(self) -> str:
        # shown wherever the widget cannot be drawn (a page not yet run, an untrusted
        # notebook): one clear line, never an address or a trait dump
        return f"{self.title} — run the page to use this player"
