"""The one PNG renderer of the book, with one cache.

Every picture a page or a widget turns into PNG bytes goes through here: a matplotlib figure
(``figure_png``), a pixel array (``array_png``), or a drawing rendered on demand and kept
under a digest of what it shows (``render``, ``render_png``).  A state shown before is shown
again from the cache without drawing; ``RENDERS`` counts the pictures actually drawn (tests
use it to check that a revisit does not redraw).
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable, Hashable

#: how many PNGs the cache keeps (least recently shown dropped first); ~30–50 kB each
PNG_CACHE_SIZE = 256
#: zlib level of the live PNGs: 1 encodes a wide picture several times faster than the
#: default 6 for ~10 % more bytes; the pixels are the same
LIVE_PNG_COMPRESSION = 1

_cache: OrderedDict[Hashable, bytes] = OrderedDict()
#: pictures drawn through ``render`` in this process (cache hits are not counted)
RENDERS = 0


def figure_png(figure, *, live: bool = False) -> bytes:
    """PNG bytes of a figure, with no software/version metadata (stable across runs);
    ``live`` (a widget's picture) encodes faster at ``LIVE_PNG_COMPRESSION``, same pixels."""
    buffer = io.BytesIO()
    extra = {"pil_kwargs": {"compress_level": LIVE_PNG_COMPRESSION}} if live else {}
    figure.savefig(buffer, format="png", metadata={"Software": None}, **extra)
    return buffer.getvalue()


def array_png(frame) -> bytes:
    """PNG bytes of a uint8 pixel array [H, W] or [H, W, 3], encoded like a live figure."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", compress_level=LIVE_PNG_COMPRESSION)
    return buffer.getvalue()


def content_key(*parts) -> str | None:
    """A digest of ``parts`` (the drawing, views, arrays, event lists …) naming one picture;
    None when a part cannot be pickled (the picture is then drawn every time)."""
    import hashlib
    import pickle

    try:
        data = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def render(key: Hashable | None, draw: Callable[[], bytes]) -> bytes:
    """The PNG stored under ``key``, or ``draw()`` — counted in ``RENDERS`` and stored."""
    global RENDERS
    png = cached_png(key)
    if png is None:
        png = draw()
        RENDERS += 1
        if key is not None:
            remember_png(key, png)
    return png


def render_png(draw: Callable, size: tuple[float, float], key: Hashable | None = None) -> bytes:
    """``draw(figure)`` on a detached figure of ``size`` inches in the book style, as a live
    PNG; with a ``key`` (see ``content_key``) a picture drawn before is not drawn again."""

    def paint() -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from labkit.reader.style import use_book_style

        use_book_style()
        figure = Figure(figsize=size)
        FigureCanvasAgg(figure)
        draw(figure)
        return figure_png(figure, live=True)

    return render(key, paint)


def cached_png(key: Hashable | None) -> bytes | None:
    """The PNG stored under ``key``, or None."""
    if key is None or key not in _cache:
        return None
    _cache.move_to_end(key)
    return _cache[key]


def remember_png(key: Hashable, png: bytes) -> None:
    """Store ``png`` under ``key``, dropping the least recently used beyond ``PNG_CACHE_SIZE``."""
    _cache[key] = png
    _cache.move_to_end(key)
    while len(_cache) > PNG_CACHE_SIZE:
        _cache.popitem(last=False)


def clear_png_cache() -> None:
    """Forget every stored PNG (the next visit of any state draws it again)."""
    _cache.clear()
