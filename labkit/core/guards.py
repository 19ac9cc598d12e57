"""The argument guards every layer shares: one definition of "an integer", "a number" and "holds a float".

``True`` is an ``int`` to Python but never a count, a seed, a step or a scale to the book: every guard refuses
booleans; NumPy scalars are accepted.  The predicates (``is_…``) leave the message to the caller; the checks raise a
``ValueError`` naming the argument, what was expected and what came (kernels call them in helpers at their top).
"""

import math

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


def real_array(name: str, value, *, finite: bool = True, min_bits: int = 0) -> np.ndarray:
    """``value`` as a real floating array, refused (``ValueError`` naming ``name``) when it is not:
    integer, boolean or complex data, NaN/∞ entries (``finite``), or floats narrower than
    ``min_bits`` (float16 squares overflow at 256, so such kernels ask for 32)."""
    array = np.asarray(value)
    if array.dtype.kind != "f":
        raise ValueError(f"{name} must be a real floating-point array, got dtype {array.dtype}")
    if array.dtype.itemsize * 8 < min_bits:
        raise ValueError(f"{name} must be float{min_bits} or wider, got {array.dtype}; convert it with .astype")
    if finite and not np.isfinite(array).all():
        bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise ValueError(f"{name} must hold finite values, got {bad} NaN or infinite entries")
    return array


def real_number(name: str, value, low=None, high=None, *, open_low=False, expected: str | None = None) -> float:
    """A finite real number in [low, high] (``(low, high]`` with ``open_low``) as a ``float``;
    a bool, a string or a complex number is refused, not converted.  ``expected`` replaces
    the message's description of what was wanted."""
    try:
        number = float(value) if is_number(value) else math.nan
    except OverflowError:  # an int beyond float range
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{name} must be {expected or 'a finite real number'}, got {value!r:.60}")
    value = number
    below = low is not None and (value <= low if open_low else value < low)
    if below or (high is not None and value > high):
        bounds = [f"{'>' if open_low else '>='} {low}"] if low is not None else []
        bounds += [f"<= {high}"] if high is not None else []
        expected = expected or " and ".join(bounds)
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return value


def token_ids(name: str, ids, size: int) -> np.ndarray:
    """Integer IDs in [0, size) as an int64 array: −1 never means "the last token"."""
    array = np.asarray(ids)
    if array.size and array.dtype.kind not in "ui":
        raise ValueError(f"{name} must hold integer token IDs, got dtype {array.dtype}")
    array = array.astype(np.int64)
    if array.size and (array.min() < 0 or array.max() >= size):
        raise ValueError(f"{name} must lie in [0, {size - 1}], got values from {array.min()} to {array.max()}")
    return array


def real_values(name: str, values, *, finite: bool = False) -> np.ndarray:
    """``values`` as a float64 array: integers convert on purpose; strings ("0.5"), booleans,
    complex numbers and objects are refused rather than parsed, cast or truncated."""
    array = np.asarray(values)
    if array.dtype.kind not in "uif":
        raise ValueError(f"{name} must hold real numbers, got dtype {array.dtype}")
    return real_array(name, array.astype(np.float64), finite=finite)
