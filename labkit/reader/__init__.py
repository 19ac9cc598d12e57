"""Presentation: show the code that runs, tables, PNGs, the book's plot style (``style``), the tables
made from lower layers' rows (``tables``), the trace figures (``traces``) and the players (``players``)."""

import base64
import inspect
import io
import sys
import textwrap
import unicodedata
from dataclasses import dataclass
from html import escape
from pathlib import Path

from labkit.core import edition
from labkit.core.guards import holds_float
from labkit.reader.numbers import fmt, fmt_bound, rounded
from labkit.reader.style import plt

__all__ = ["PNG", "Chart", "SourceView", "Table", "fmt", "fmt_bound", "plt", "rounded", "show_figure", "show_source"]


@dataclass(frozen=True)
class SourceView:
    """A function's or class's real source as a code block; ``text/plain`` is the source itself, so a
    stored output changes exactly when the code that runs changes."""

    source: str
    qualname: str
    module: str

    def __repr__(self) -> str:
        return f"# {self.module}.{self.qualname}\n{self.source}"

    def _repr_markdown_(self) -> str:
        return f"`{self.module}.{self.qualname}`\n\n```python\n{self.source}\n```"

    def _repr_html_(self) -> str:
        """The same block as HTML with inline styles, for hosts that show ``text/markdown`` raw (the static
        book's theme); Pygments comes with ipywidgets, through IPython."""
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        code = highlight(self.source, PythonLexer(), HtmlFormatter(noclasses=True, nowrap=True))
        return (
            f'<div class="labkit-source"><code>{escape(f"{self.module}.{self.qualname}")}</code>'
            f'<pre style="line-height:1.35;overflow-x:auto;padding:6px 8px;background:#f6f8fa">'
            f"{code.rstrip()}</pre></div>"
        )


def _from_the_book(module: str) -> bool:
    """``module`` is labkit's, or a book package a page loaded (``fixtures.import_from_book``: the harness)."""
    top = sys.modules.get(module.partition(".")[0])
    init = Path(getattr(top, "__file__", None) or "")
    return module.startswith("labkit") or (init.name == "__init__.py" and (init.parents[1] / "myst.yml").is_file())


def show_source(obj) -> SourceView:
    """Return the source of a labkit function, class or method (or one of the book's clone) for display."""
    target = inspect.unwrap(obj)
    module = getattr(target, "__module__", "") or ""
    if not _from_the_book(module):
        raise ValueError(f"show_source shows the book's code only; {obj!r} comes from {module or 'nowhere'}")
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError) as exc:
        raise ValueError(f"no source available for {obj!r}: {exc}") from None
    return SourceView(textwrap.dedent(source).rstrip(), getattr(target, "__qualname__", repr(target)), module)


class Table:
    """A small table that renders as HTML in the page and as aligned text in stored outputs."""

    def __init__(self, rows, headers, title: str | None = None):
        self.headers = [str(h) for h in headers]
        self.rows = [[fmt(v) if holds_float(v) else str(v) for v in row] for row in rows]
        for row in self.rows:
            if len(row) != len(self.headers):
                raise ValueError(f"every row needs {len(self.headers)} cells, got {len(row)}: {row}")
        self.title = title

    def __repr__(self) -> str:
        widths = [max([_width(h)] + [_width(r[i]) for r in self.rows]) for i, h in enumerate(self.headers)]

        def line(cells):
            padded = (c + " " * (w - _width(c)) for c, w in zip(cells, widths, strict=True))
            return "  ".join(padded).rstrip()

        out = [self.title] if self.title else []
        out += [line(self.headers), line(["-" * w for w in widths])]
        out += [line(r) for r in self.rows]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        caption = f"<caption>{escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (bytes 16–24: after the signature and the chunk's head)."""
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


class PNG:
    """PNG bytes shown ``width`` CSS pixels wide in JupyterLab and the static book alike: IPython's
    ``Image(data, width=N)`` keeps the width in metadata, which the book's theme ignores; an ``<img width>``
    carries it in the output.  ``text/plain`` names the size only, so it does not change with the bytes."""

    def __init__(self, data: bytes, width: int, alt: str = ""):
        # a PNG opens with its signature, then the IHDR chunk that names its size
        head = bytes(data[:24]) if isinstance(data, (bytes, bytearray)) else b""
        size = _png_size(head)
        if not head.startswith(b"\x89PNG\r\n\x1a\n") or head[12:16] != b"IHDR" or not all(size):
            raise ValueError(f"data must be the bytes of a PNG file (its IHDR with a size), got {type(data).__name__}")
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive number of pixels, got {width!r}")
        self.data = bytes(data)
        self.width = width
        self.alt = alt
        self.natural_size = size
        self.height = round(self.natural_size[1] * width / self.natural_size[0])

    def __repr__(self) -> str:
        return "PNG {}×{} px, shown {}×{}".format(*self.natural_size, self.width, self.height)

    def _repr_html_(self) -> str:
        return _img(self.data, self.alt, f'width="{self.width}" height="{self.height}"')


def _img(png: bytes, alt: str, size: str, css_class: str = "") -> str:
    """PNG bytes as an ``<img>`` the output itself carries (``size``: its width and height attributes)."""
    classes = f'class="{css_class}" ' if css_class else ""
    encoded = base64.b64encode(png).decode("ascii")
    return f'<img {classes}src="data:image/png;base64,{encoded}" {size} alt="{escape(alt)}">'


@dataclass(frozen=True)
class Chart:
    """A drawn figure with its text alternative: ``<img alt>`` in HTML, the alternative alone as
    ``text/plain`` (a screen reader's, a text-only host's, the stored notebook's), so a stored output
    changes with the description, not with the pixels a machine's fonts draw."""

    png: bytes
    alt: str

    def __repr__(self) -> str:
        return self.alt

    def _repr_png_(self) -> bytes:  # what the PDF and a host without HTML take
        return self.png

    def _repr_html_(self) -> str:
        width, _ = _png_size(self.png)  # shown at its own size, as an inline figure is
        return _img(self.png, self.alt, f'width="{width}"', "labkit-figure")


def show_figure(alt: str, fig=None) -> Chart:
    """The current figure (or ``fig``), closed, as a ``Chart`` described by ``alt`` (what it shows, in a
    sentence or two); the Chinese edition's description is the one ``zh.toml`` pairs with ``alt``."""
    if not isinstance(alt, str) or not alt.strip() or alt.lstrip().startswith("<Figure"):
        raise ValueError(f"alt must say what the figure shows, got {alt!r}")
    pyplot = plt()
    fig = pyplot.gcf() if fig is None else fig
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    pyplot.close(fig)
    return Chart(buffer.getvalue(), edition.translate(Path(__file__).parent, " ".join(alt.split())))
