"""The one engine every exercise runs on: an exercise is data, graded here.

An exercise has a kind (predict, diagnose, extend, derive), a task, two hint levels (the idea;
the rule and where it breaks — never the answer) and a grading: one of the declarative ones of
``labkit.check.grading`` (value, function, trace), or a custom one registered with ``exercise``.
Here: the ``Exercise`` object, the verdict, calling the reader's code safely, comparing arrays.

Hint state lives on each exercise object: a second wrong run of the same exercise shows level 2.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from labkit.check import feedback

registry: dict[str, Exercise] = {}

KINDS = ("predict", "diagnose", "extend", "derive")


class CandidateProblem(Exception):
    """The candidate cannot be checked (not implemented, wrong signature, crashed, bad output)."""


@dataclass
class CheckResult:
    """The verdict on one candidate.

    ``concept`` is the first-level hint (the idea to revisit); ``rule`` and ``hint`` are the
    second level. A failed result shows level 1 until the reader asks for more
    (``result.more()``) or runs the same exercise wrong a second time.
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


@dataclass(eq=False)
class Exercise:
    """One exercise: what it asks (``kind``, ``task``, ``signature`` — empty for a value), how
    it is graded (``grade(candidate) -> CheckResult``) and its two hint levels."""

    name: str
    page: str
    kind: str
    task: str
    signature: tuple[str, ...]
    grade: Callable[[Any], CheckResult] = field(repr=False)
    idea: str = ""
    rule: str = ""
    wrong_runs: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"exercise {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.task or not self.idea:
            raise ValueError(f"exercise {self.name!r} needs a task and an idea (the first-level hint)")

    @property
    def is_value(self) -> bool:
        """A prediction or a derived value (``check.name(value)``), not a function."""
        return not self.signature

    def __call__(self, candidate) -> CheckResult:
        try:
            if not self.is_value:
                _check_signature(candidate, self.signature)
            elif candidate is Ellipsis:
                raise CandidateProblem("not yet answered: replace the `...` with your value and run the check again")
            elif callable(candidate):
                raise CandidateProblem("this exercise takes a value (your prediction), not a function")
            result = self.grade(candidate)
        except CandidateProblem as problem:
            return CheckResult(self.name, False, str(problem))
        result.exercise = self.name
        return self._escalate(result)

    def _escalate(self, result: CheckResult) -> CheckResult:
        """Attach the idea (and the rule, unless the grading gave a precise one); a second wrong
        answer in a row shows level 2. A stub or a crash is not an attempt at the idea."""
        if result.passed:
            self.wrong_runs = 0
            return result
        result.concept = result.concept or self.idea
        result.hint = result.hint or self.rule or None
        self.wrong_runs += 1
        if self.wrong_runs >= 2:
            result.level = 2
        return result

    def __repr__(self) -> str:
        what = f"({', '.join(self.signature)})" if self.signature else " = <your value>"
        return f"{self.kind} exercise {self.name}{what} — {self.task} [{self.page}]"


#: the name the command line and older code know an exercise by
ExerciseSpec = Exercise


def register(spec: Exercise) -> Exercise:
    if spec.name in registry:
        raise ValueError(f"exercise {spec.name!r} is registered twice")
    registry[spec.name] = spec
    return spec


def reset_attempts() -> None:
    """Forget every wrong run (the next wrong answer of each exercise shows level 1 again)."""
    for spec in registry.values():
        spec.wrong_runs = 0


def exercise(name: str, page: str, signature: tuple[str, ...], *, kind: str, idea: str, rule: str = "", task=None):
    """Register ``grade(candidate) -> CheckResult`` as exercise ``name`` (the custom grading: the
    reader's piece inside a runtime). The task is ``task`` or the grading's docstring."""

    def wrap(grade: Callable[[Any], CheckResult]) -> Exercise:
        text = task if task is not None else " ".join((grade.__doc__ or "").split())
        return register(Exercise(name, page, kind, text, tuple(signature), grade, idea, rule))

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
        raise CandidateProblem(
            f"your function raised {type(exc).__name__}: {exc}{_your_line(candidate, exc)}"
        ) from None


_KIT = str(Path(__file__).resolve().parents[1])


def _your_line(candidate, exc: Exception) -> str:
    """`` (line 3 of your cell: `return x[5]`)``: the deepest frame in the reader's own file (a
    notebook cell or the --file), with line numbers counted from its top — never a frame inside
    NumPy or labkit."""
    function = candidate if inspect.isfunction(candidate) else vars(type(candidate)).get("__call__")
    code = getattr(function, "__code__", None)
    if code is None or code.co_filename.startswith(_KIT):  # a kit's proxy (the sandbox) says where itself
        return ""
    mine = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == code.co_filename]
    if not mine:
        return ""
    place = "cell" if "ipykernel" in code.co_filename or code.co_filename.startswith("<") else "file"
    text = f": `{mine[-1].line.strip()}`" if mine[-1].line else ""
    return f" (line {mine[-1].lineno} of your {place}{text})"


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


def numeric_array(value, name: str, shape: tuple[int, ...] | None):
    """A float array of exactly ``shape`` (any shape when None) (NaN/inf allowed here: the caller judges them)."""
    import numpy as np

    try:
        array = np.asarray(value)
    except Exception:
        raise CandidateProblem(f"{name} must be array-like, got {type(value).__name__}") from None
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise CandidateProblem(f"{name} must hold numbers, got {type(value).__name__} of dtype {array.dtype}")
    if shape is not None and array.shape != tuple(shape):
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
    got, expected, *, atol: float, where: str, hint: str | None, rule: str = "values within tolerance"
) -> CheckResult:
    """Pass, or report the first element (in C order) that differs beyond ``atol``."""
    import numpy as np

    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return failure(
            "wrong shape", where=where, rule="shape", got=list(got.shape), expected=list(expected.shape), hint=hint
        )
    got, expected = np.atleast_1d(got), np.atleast_1d(expected)  # argwhere finds nothing in a 0-d array
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
