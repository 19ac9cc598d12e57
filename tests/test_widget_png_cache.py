"""The widgets' PNG cache: a revisited state is shown without drawing, a new state is drawn,
and the key tells states apart by content (``labkit.reader.png``: ``render_png``, ``WidgetView._draw``)."""

import numpy as np

import labkit.reader.png as renderer
from labkit.reader.png import content_key


def test_content_key_tells_states_apart_by_content():
    a = {"view": np.arange(4.0), "label": "step 1"}
    same = {"view": np.arange(4.0), "label": "step 1"}
    other = {"view": np.arange(4.0) + 1e-12, "label": "step 1"}
    assert content_key("draw", a) == content_key("draw", same), "equal content must give one key"
    assert content_key("draw", a) != content_key("draw", other), "a 1e-12 change must give another key"
    assert content_key("draw", a) != content_key("other draw", a), "the drawing is part of the key"
    assert content_key("draw", lambda: 1) is None, "an unpicklable state gets no key (always drawn)"


def test_render_png_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(renderer, "PNG_CACHE_SIZE", 3)
    for i in range(5):
        renderer.remember_png(("test", i), b"png%d" % i)
    assert renderer.cached_png(("test", 0)) is None and renderer.cached_png(("test", 1)) is None, (
        "the oldest entries must be dropped beyond PNG_CACHE_SIZE"
    )
    assert renderer.cached_png(("test", 4)) == b"png4"
