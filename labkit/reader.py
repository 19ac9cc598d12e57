"""Helpers for reading the book in Jupyter: show the code that runs, and a quiet plot style."""

from __future__ import annotations

import inspect
import textwrap
import warnings

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


# --- the book's one number formatter (CONTRIBUTING.md, "Numbers in stored outputs") ---------
#: Significant digits of a float64 value in a stored output: a different BLAS kernel moves a
#: float64 result by a few ulps (~1e-16 relative), far below the 10th digit.
FLOAT64_DIGITS = 10
#: Decimals of a float32 value (logits, latents): kernels move them by ~1e-6.
FLOAT32_DECIMALS = 4


def _float_text(value: float, digits: int) -> str:
    """``repr`` of the value cut to ``digits`` significant digits (``0.5981388694``, ``1e-05``,
    ``1.0``); never ``-0.0``."""
    return repr(float(format(float(value), f".{digits}g")) + 0.0)


def fmt(value, digits: int | None = None, decimals: int | None = None) -> str:
    """A value as a stored output may show it, the same on every CPU, kernel and thread count.

    Integers, booleans, strings and None print exactly; a float64 prints with ``digits``
    significant digits (default ``FLOAT64_DIGITS``); a float32/float16 with ``decimals``
    decimals (default ``FLOAT32_DECIMALS``); ``decimals`` given forces fixed decimals for any
    float.  Lists, tuples and arrays print element-wise as ``[a, b]`` (tuples as ``(a, b)``).
    Negative zero prints as 0.
    """
    import numpy as np

    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_) or value is None:
        return str(bool(value)) if value is not None else "None"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, np.floating) and value.dtype.itemsize < 8 and decimals is None:
        decimals = FLOAT32_DECIMALS
    if isinstance(value, float | np.floating):
        if decimals is not None:
            text = f"{float(value):.{decimals}f}"
            return text[1:] if text.startswith("-") and float(text) == 0 else text
        return _float_text(value, digits or FLOAT64_DIGITS)
    if isinstance(value, np.ndarray):
        value = list(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(fmt(v, digits, decimals) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return str(value)


def fmt_bound(value: float, bound: float) -> str:
    """A discrepancy (max |a − b|, an error, a residual) against its stated tolerance.

    ``≤ 1e-12 ✓`` when ``value ≤ bound``; otherwise the value to two digits and ``✗``.  The
    value's last bits are a property of the machine, so only the verdict is shown.
    """
    if not bound >= 0:
        raise ValueError(f"bound must be a non-negative float, got {bound!r}")
    if float(value) <= bound:
        return f"≤ {bound:g} ✓"
    return f"{float(value):.1e} > {bound:g} ✗"


def rounded(value, digits: int | None = None, bounds: dict | None = None):
    """A JSON-like value (dicts, lists, floats…) with every float cut to ``digits`` significant
    digits, for showing a report in a stored output; the full-precision value stays in the
    report itself.  ``bounds`` maps a key to its tolerance: that key's float, when within the
    tolerance, becomes ``fmt_bound(value, tolerance)`` (``≤ 1e-12 ✓``: a discrepancy measure
    shown against its tolerance); beyond it, it is a real figure (a fault's error) and is cut
    to ``digits`` like any other float.
    """
    import numpy as np

    bounds = bounds or {}
    if isinstance(value, dict):
        return {k: (fmt_bound(v, bounds[k]) if k in bounds and isinstance(v, float | np.floating) and v <= bounds[k]
                    else rounded(v, digits, bounds)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(rounded(v, digits, bounds) for v in value)
    if isinstance(value, np.ndarray):
        return rounded(value.tolist(), digits, bounds)
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return round(float(value), FLOAT32_DECIMALS) + 0.0
    if isinstance(value, float | np.floating):
        return float(_float_text(value, digits or FLOAT64_DIGITS))
    return value


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
