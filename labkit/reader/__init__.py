"""Helpers for reading the book in Jupyter: show the code that runs, and a quiet plot style."""

from __future__ import annotations

import inspect
import textwrap
import warnings

from labkit.reader.numbers import FLOAT32_DECIMALS, FLOAT64_DIGITS, fmt, fmt_bound, rounded  # noqa: F401

# Fonts that carry the Chinese glyphs of the fixtures, in order of preference.
CJK_FONT_NAMES = (
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Droid Sans Fallback",
)
_CJK_FILE_HINTS = ("wqy", "notosanscjk", "noto-cjk", "sourcehansans", "droidsansfallback")


class SourceView:
    """A function's or class's real source, rendered as a code block in notebooks.

    ``text/plain`` is the source itself, so a stored notebook output changes exactly when
    the code that runs changes.
    """

    def __init__(self, source: str, qualname: str, module: str):
        self.source = source
        self.qualname = qualname
        self.module = module

    def __repr__(self) -> str:
        return f"# {self.module}.{self.qualname}\n{self.source}"

    def _repr_markdown_(self) -> str:
        return f"`{self.module}.{self.qualname}`\n\n```python\n{self.source}\n```"


def show_source(obj) -> SourceView:
    """Return the source of a labkit function, class or method for display."""
    target = inspect.unwrap(obj)
    module = getattr(target, "__module__", "") or ""
    if not module.startswith("labkit"):
        raise ValueError(f"show_source shows labkit code only; {obj!r} comes from {module or 'nowhere'}")
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError) as exc:
        raise ValueError(f"no source available for {obj!r}: {exc}") from None
    return SourceView(textwrap.dedent(source).rstrip(), getattr(target, "__qualname__", repr(target)), module)


def find_cjk_font() -> str | None:
    """Name of an installed font with Chinese glyphs, registering system files if needed."""
    from matplotlib import font_manager

    known = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONT_NAMES:
        if name in known:
            return name
    # A font installed after matplotlib built its cache is not listed yet: look for it.
    for path in font_manager.findSystemFonts():
        lowered = path.lower().replace("_", "").replace(" ", "")
        if any(hint in lowered for hint in _CJK_FILE_HINTS):
            try:
                font_manager.fontManager.addfont(path)
            except Exception:  # an unreadable font file is simply skipped
                continue
    known = {f.name for f in font_manager.fontManager.ttflist}
    for name in CJK_FONT_NAMES:
        if name in known:
            return name
    return None


def use_book_style() -> str | None:
    """Set the book's plot style; return the CJK font used, or None.

    Without a CJK font, Chinese labels render as boxes but no warning reaches the stored
    notebook outputs (missing-glyph warnings are silenced).
    """
    import logging

    import matplotlib

    font = find_cjk_font()
    sans = [font] if font else []
    sans += ["DejaVu Sans"]
    matplotlib.rcParams.update(
        {
            "font.family": "sans-serif",
            "font.sans-serif": sans,
            "axes.unicode_minus": False,
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "figure.figsize": (7.0, 3.6),
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "inside-one-generation",
        }
    )
    if font is None:
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from (current )?font")
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    return font


def plt():
    """matplotlib.pyplot with the book style applied (imported only when a figure is drawn)."""
    import matplotlib.pyplot as pyplot

    use_book_style()
    return pyplot


class Table:
    """A small table that renders as HTML in the page and as aligned text in stored outputs."""

    def __init__(self, rows, headers, title: str | None = None):
        self.headers = [str(h) for h in headers]
        self.rows = [[_cell(v) for v in row] for row in rows]
        for row in self.rows:
            if len(row) != len(self.headers):
                raise ValueError(f"every row needs {len(self.headers)} cells, got {len(row)}: {row}")
        self.title = title

    def __repr__(self) -> str:
        widths = [max(_width(h), *(_width(r[i]) for r in self.rows)) if self.rows else _width(h)
                  for i, h in enumerate(self.headers)]
        line = lambda cells: "  ".join(c + " " * (w - _width(c)) for c, w in zip(cells, widths, strict=True)).rstrip()  # noqa: E731
        out = [self.title] if self.title else []
        out += [line(self.headers), line(["-" * w for w in widths])]
        out += [line(r) for r in self.rows]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        from html import escape

        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        caption = f"<caption>{escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value) -> str:
    return fmt(value) if _has_float(value) else str(value)


def _has_float(value) -> bool:
    import numpy as np

    if isinstance(value, float | np.floating):
        return True
    if isinstance(value, np.ndarray):
        return np.issubdtype(value.dtype, np.floating)
    return isinstance(value, list | tuple) and any(_has_float(v) for v in value)


def _width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def new_figure(pyplot: bool, size: tuple[float, float]):
    """A figure in the book style: through pyplot for a static cell (shown by ``plt.show()``),
    or detached for a widget that renders it to PNG itself."""
    use_book_style()
    if pyplot:
        import matplotlib.pyplot as plt_module

        return plt_module.figure(figsize=size, layout="constrained")
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def figure_png(figure) -> bytes:
    """PNG bytes of a figure, with no software/version metadata (stable across runs)."""
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
