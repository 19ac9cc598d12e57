"""The book's one number formatter (CONTRIBUTING.md, "Numbers in stored outputs"): what a stored output
may show of a float, so that it reads the same on every CPU, BLAS kernel and thread count."""

import numpy as np

#: Significant digits of a float64 value in a stored output: a different BLAS kernel moves a
#: float64 result by a few ulps (~1e-16 relative); at 6 digits a value would have to sit within
#: ~1e-16 of a rounding boundary for the text to change, ten orders of magnitude of margin.
FLOAT64_DIGITS = 6
#: Decimals of a float32 value (logits, latents): kernels move them by ~1e-6.
FLOAT32_DECIMALS = 4


def fmt(value, digits: int | None = None) -> str:
    """A value as a stored output may show it: integers, booleans, strings and None exactly; a float64
    at ``digits`` (default ``FLOAT64_DIGITS``) significant digits, a float32/float16 at ``FLOAT32_DECIMALS``
    decimals, never ``-0``; lists, tuples and arrays element-wise (``[a, b]``, ``(a, b)``)."""
    if value is None or isinstance(value, str | bool | np.bool_):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        text = f"{float(value):.{FLOAT32_DECIMALS}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    if isinstance(value, float | np.floating):  # the repr of the cut value (0.598139, 1e-05, 1.0), + 0.0: never -0.0
        return repr(float(format(float(value), f".{digits or FLOAT64_DIGITS}g")) + 0.0)
    if isinstance(value, np.ndarray):
        value = list(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(fmt(v, digits) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return str(value)


def fmt_bound(value: float, bound: float) -> str:
    """A discrepancy (max |a − b|, an error, a residual) against its tolerance: ``≤ 1e-12 ✓`` within it,
    else the value to two digits and ``✗`` (its last bits belong to the machine: only the verdict is shown)."""
    if not bound >= 0:
        raise ValueError(f"bound must be a non-negative float, got {bound!r}")
    if float(value) <= bound:
        return f"≤ {bound:g} ✓"
    return f"{float(value):.1e} > {bound:g} ✗"


def rounded(value, bounds: dict | None = None):
    """A JSON-like value with every float cut as ``fmt`` shows it (the report keeps full precision).
    ``bounds`` maps a key to its tolerance: that key's float, when within it, becomes ``fmt_bound``'s
    verdict; beyond it, it is a real figure (a fault's error), cut like any other float."""
    bounds = bounds or {}
    if isinstance(value, dict):
        within = {k for k, v in value.items() if k in bounds and isinstance(v, float | np.floating) and v <= bounds[k]}
        return {k: fmt_bound(v, bounds[k]) if k in within else rounded(v, bounds) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(rounded(v, bounds) for v in value)
    if isinstance(value, np.ndarray):
        return rounded(value.tolist(), bounds)
    if isinstance(value, float | np.floating):
        return float(fmt(value))  # the value ``fmt`` shows
    return value
