"""The book's plot style: a CJK font when one is installed, quiet when none is."""

import contextlib
import logging
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


def find_cjk_font() -> str | None:
    """Name of an installed font with Chinese glyphs, registering system files if needed."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    if not set(CJK_FONT_NAMES) & {f.name for f in manager.ttflist}:
        # A font installed after matplotlib built its cache is not listed yet: look for it.
        for path in font_manager.findSystemFonts():
            if any(hint in path.lower().replace("_", "").replace(" ", "") for hint in _CJK_FILE_HINTS):
                with contextlib.suppress(Exception):  # an unreadable font file is simply skipped
                    manager.addfont(path)
    known = {f.name for f in manager.ttflist}
    return next((name for name in CJK_FONT_NAMES if name in known), None)


def use_book_style() -> str | None:
    """Set the book's plot style; return the CJK font used, or None (then Chinese labels render as boxes,
    and the missing-glyph warnings are silenced so that none reaches a stored output)."""
    import matplotlib

    font = find_cjk_font()
    matplotlib.rcParams.update(
        {
            "font.family": "sans-serif",
            "font.sans-serif": [font, "DejaVu Sans"] if font else ["DejaVu Sans"],
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
