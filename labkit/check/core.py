"""The machinery shared by every exercise: calling the reader's function safely and reporting.

A checker never shows the reference implementation.  It reports the first divergence —
where, which rule, the reader's value and the expected value — and a hint about the idea.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from labkit.check import feedback
from labkit.check.concepts import CONCEPTS

registry: dict[str, ExerciseSpec] = {}

#: wrong runs per exercise in this session (a pass resets it): the second shows level 2
_wrong_runs: dict[str, int] = {}


class CandidateProblem(Exception):
    """The candidate cannot be checked (not implemented, wrong signature, crashed, bad output)."""


@dataclass
class CheckResult:
    """The verdict on one candidate.

    ``concept`` is the first-level hint (the idea to revisit); ``rule`` and ``hint`` are the
    second level (they may state the formula). A failed result shows level 1 until the reader
    asks for more (``result.more()``) or runs the same exercise wrong a second time.
    """

    exercise: str
    passed: bool
    message: str
    where: str | None = None
    rule: str | None = None
    got: Any = None
    expected: Any = None
    hint: str | None = None
    concept: str | None = None
    level: int = 1

    def __bool__(self) -> bool:
        return self.passed

    def more(self) -> CheckResult:
        """The same verdict with the rule and the precise hint shown (level 2)."""
        return replace(self, level=2)

    def __repr__(self) -> str:
        return feedback.as_text(self, self.level)

    def _repr_html_(self) -> str:
        return feedback.as_html(self, self.level)


@dataclass(frozen=True)
class ExerciseSpec:
    """An exercise: its name, the page it belongs to, the signature it expects, its checker."""

    name: str
    page: str
    signature: tuple[str, ...]
    task: str
    checker: Callable[[Callable], CheckResult] = field(repr=False)

    def __call__(self, candidate) -> CheckResult:
        try:
            _check_signature(candidate, self.signature)
            result = self.checker(candidate)
        except CandidateProblem as problem:
            return CheckResult(self.name, False, str(problem))
        result.exercise = self.name  # a checker's verdict carries the name its decorator knows
        return _escalate(self.name, result)

    def __repr__(self) -> str:
        return f"exercise {self.name}({', '.join(self.signature)}) — {self.task} [{self.page}]"


def _escalate(name: str, result: CheckResult) -> CheckResult:
    """Attach the exercise's concept; a second wrong answer in a row shows level 2.

    Only a wrong answer counts (a stub or a crash is not an attempt at the idea)."""
    if result.passed:
        _wrong_runs.pop(name, None)
        return result
    if result.concept is None:
        result.concept = CONCEPTS.get(name)
    _wrong_runs[name] = _wrong_runs.get(name, 0) + 1
    if _wrong_runs[name] >= 2:
        result.level = 2
    return result


def reset_attempts() -> None:
    """Forget every wrong run (the next wrong answer of each exercise shows level 1 again)."""
    _wrong_runs.clear()


def exercise(name: str, page: str, signature: tuple[str, ...], task: str | None = None):
    """Register ``checker(candidate) -> CheckResult`` as exercise ``name``.

    The task the reader is set is ``task`` or, usually, the checker's docstring: a checker is
    its question (the docstring), its cases and its hints."""

    def wrap(checker: Callable[[Callable], CheckResult]) -> ExerciseSpec:
        if name in registry:
            raise ValueError(f"exercise {name!r} is registered twice")
        text = task if task is not None else " ".join((checker.__doc__ or "").split())
        if not text:
            raise ValueError(f"exercise {name!r} needs a task: give task= or a docstring")
        spec = ExerciseSpec(name, page, signature, text, checker)
        registry[name] = spec
        return spec

    return wrap


def _check_signature(candidate, expected: tuple[str, ...]) -> None:
    if not callable(candidate):
        raise CandidateProblem(f"expected a function, got {type(candidate).__name__}")
    try:
        params = inspect.signature(candidate).parameters
    except (TypeError, ValueError):
        return
    try:
        inspect.signature(candidate).bind(*expected)
    except TypeError:
        names = ", ".join(params)
        raise CandidateProblem(
            f"your function takes ({names}) but the exercise calls it with ({', '.join(expected)})"
        ) from None


def passed(message: str) -> CheckResult:
    """A checker's pass; the exercise's name is filled in by ``ExerciseSpec``."""
    return CheckResult("", True, message)


def failure(message: str, **details) -> CheckResult:
    """A checker's failure (``where``, ``rule``, ``got``, ``expected``, ``hint``); the name is
    filled in by ``ExerciseSpec``."""
    return CheckResult("", False, message, **details)


def call(candidate, *args, **kwargs):
    """Run the reader's function; turn every failure into a clear ``CandidateProblem``.

    NumPy's overflow/invalid warnings are silenced: a NaN or an infinity is judged, not warned."""
    import numpy as np

    try:
        with np.errstate(all="ignore"):
            return candidate(*args, **kwargs)
    except NotImplementedError as exc:
        detail = f" ({exc})" if str(exc) else ""
        raise CandidateProblem(
            f"not yet implemented{detail}: replace the `raise NotImplementedError` "
            "with your code and run the check again"
        ) from None
    except CandidateProblem:
        raise
    except Exception as exc:  # the reader's code failed: say where, without a traceback wall
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "labkit" not in (f.filename or "")]
        where = f" (line {frames[-1].lineno} of your code)" if frames else ""
        raise CandidateProblem(f"your function raised {type(exc).__name__}: {exc}{where}") from None


def as_array(value, name: str, shape: tuple[int, ...] | None = None, dtype_kind: str | None = None):
    """Check that the reader returned an array of the right shape, kind and finite values."""
    import numpy as np

    try:
        array = np.asarray(value)
    except Exception:
        raise CandidateProblem(f"{name} must be array-like, got {type(value).__name__}") from None
    if array.dtype == object:
        raise CandidateProblem(f"{name} must be numeric, got {type(value).__name__}")
    if shape is not None and array.shape != tuple(shape):
        raise CandidateProblem(f"{name} must have shape {list(shape)}, got {list(array.shape)}")
    if dtype_kind == "bool" and array.dtype != bool:
        raise CandidateProblem(f"{name} must be a boolean array, got dtype {array.dtype}")
    if dtype_kind == "float" and not np.issubdtype(array.dtype, np.floating):
        raise CandidateProblem(f"{name} must hold floating-point numbers, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and np.isnan(array).any():
        first = [int(i) for i in np.argwhere(np.isnan(array))[0]]
        raise CandidateProblem(f"{name} contains NaN (first at index {first})")
    return array


def numeric_array(value, name: str, shape: tuple[int, ...]):
    """A float array of exactly ``shape`` (NaN/inf allowed here: the caller judges them)."""
    import numpy as np

    try:
        array = np.asarray(value)
    except Exception:
        raise CandidateProblem(f"{name} must be array-like, got {type(value).__name__}") from None
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise CandidateProblem(f"{name} must hold numbers, got {type(value).__name__} of dtype {array.dtype}")
    if array.shape != tuple(shape):
        raise CandidateProblem(f"{name} must have shape {list(shape)}, got {list(array.shape)}")
    return array.astype(np.float64)


def unpack(value, names: tuple[str, ...]):
    """The candidate returned a tuple of ``len(names)`` items: check and return it."""
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        raise CandidateProblem(
            f"return a tuple ({', '.join(names)}), got {type(value).__name__}"
            + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        )
    return value


def number(value, name: str) -> float:
    """A single real number (NaN and ±inf allowed here: the caller judges them)."""
    import numpy as np

    if isinstance(value, bool):
        raise CandidateProblem(f"{name} must be a number, got a bool ({value})")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CandidateProblem(f"{name} must be a number, got {type(value).__name__}") from None
    if array.size != 1:
        raise CandidateProblem(f"{name} must be one number, got an array of shape {list(array.shape)}")
    return float(array.reshape(()))


def compare_arrays(
    got, expected, *, atol: float, where: str, hint: str, rule: str = "values within tolerance"
) -> CheckResult:
    """Pass, or report the first element (in C order) that differs beyond ``atol``."""
    import numpy as np

    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return failure(
            "wrong shape", where=where, rule="shape", got=list(got.shape), expected=list(expected.shape), hint=hint
        )
    if got.dtype == bool or expected.dtype == bool:
        bad = np.argwhere(got != expected)
    else:
        close = np.isclose(got, expected, rtol=0.0, atol=atol) | (
            np.isinf(got) & np.isinf(expected) & (np.sign(got) == np.sign(expected))
        )
        bad = np.argwhere(~close)
    if bad.size == 0:
        return passed("matches the reference")
    index = tuple(int(i) for i in bad[0])
    return failure(
        f"{len(bad)} of {got.size} values differ",
        where=f"{where}{list(index)}",
        rule=rule,
        got=got[index].item(),
        expected=expected[index].item(),
        hint=hint,
    )
