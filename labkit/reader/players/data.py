"""What the players' exporters share: numbers as the book shows them (``r4``, ``significant``), the labels
and grids their data is keyed by (``label``, ``grid``), a named option's check and texts in both editions."""

import itertools
import math

import numpy as np


def r4(value) -> float | None:
    """A float rounded to 4 decimals (None for ±∞/NaN: drawn as masked)."""
    value = float(value)
    return round(value, 4) + 0.0 if math.isfinite(value) else None  # + 0.0: never -0.0


def significant(values, digits: int) -> list[float]:
    """Floats at ``digits`` significant digits (an array is flattened first): for values spanning
    orders of magnitude, where fixed decimals would hide the small ones."""
    return [float(f"{float(v):.{digits}g}") for v in np.ravel(values)]


def label(value) -> str:
    """A value as a player's data names it: a float as ``%g`` (``-2``, ``0.2``, ``1e-08``), a tuple
    as its values joined by spaces (a group of rewards: ``0 0 1 1``), anything else as ``str``."""
    if isinstance(value, tuple):
        return " ".join(label(float(v)) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def grid(axes: dict, compute) -> dict:
    """``compute(*choice)`` for every choice of one value per axis (the first axis slowest), keyed
    by the choice's labels joined with ``|``: the key the player looks the state up by."""
    return {"|".join(map(label, choice)): compute(*choice) for choice in itertools.product(*axes.values())}


def one_of(name: str, value, options, *, optional: bool = False):
    """``value`` when it is one of ``options`` (or None, when ``optional``); else an error naming it."""
    if value in options or (optional and value is None):
        return value
    raise ValueError(f"{name} must be one of {list(options)}{' or None' if optional else ''}, got {value!r}")


def words(en: str, zh: str) -> dict[str, str]:
    """A text of a player's data in both editions (``pick`` in ``_shared.mjs`` shows the edition's)."""
    return {"en": en, "zh": zh}
