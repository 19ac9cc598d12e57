"""The argument guards every layer shares: one definition of "an integer", "a number"
and "holds a float".

``True`` is an ``int`` to Python but never a count, a seed, a step or a scale to the book,
so every guard refuses booleans; NumPy scalars are accepted.  Callers keep their own
messages, which name the argument and what was expected.
"""

from __future__ import annotations

import numpy as np


def of_type(value, kinds) -> bool:
    """``isinstance(value, kinds)``, a bool never counting as a number."""
    return isinstance(value, kinds) and not isinstance(value, (bool, np.bool_))


def is_integer(value) -> bool:
    """An ``int`` or NumPy integer, not a bool."""
    return of_type(value, (int, np.integer))


def is_number(value) -> bool:
    """An ``int``, ``float`` or NumPy real scalar, not a bool."""
    return of_type(value, (int, float, np.integer, np.floating))


def holds_float(value) -> bool:
    """A float, a float array, or a list/tuple holding one somewhere (nested)."""
    if isinstance(value, float | np.floating):
        return True
    if isinstance(value, np.ndarray):
        return np.issubdtype(value.dtype, np.floating)
    return isinstance(value, list | tuple) and any(holds_float(v) for v in value)
