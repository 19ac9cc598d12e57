"""The verdict on a candidate and the comparisons the engine (``labkit.check.core``) grades with. The
reader's code never lets an exception out: it becomes a ``CandidateProblem`` naming the reader's line.
"""

import copy
import inspect
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

import numpy as np

from labkit.check import feedback
from labkit.check.feedback import say
from labkit.trace.divergence import first_divergence


class CandidateProblem(Exception):
    """The candidate cannot be checked (not implemented, wrong signature, crashed, bad output)."""


class NotAttempted(CandidateProblem):
    """The page's template is still there: a ``...`` value or a ``raise NotImplementedError``."""


@dataclass
class CheckResult:
    """The verdict on one candidate: where it fails and the reader's own value there, never the
    expected one. ``concept`` is the first-level hint (the idea to revisit); ``rule`` and ``hint``
    are the second level, shown by ``result.more()`` or a second wrong run. ``status`` is passed,
    failed, not attempted (the template is still there) or unverified (only the key can judge it)."""

    exercise: str
    passed: bool
    message: str
    where: str | None = None
    rule: str | None = None
    got: Any = None
    hint: str | None = None
    concept: str | None = None
    level: int = 1
    status: str = ""
    revealed: bool = False

    def __post_init__(self) -> None:
        self.status = self.status or ("passed" if self.passed else "failed")

    def __bool__(self) -> bool:
        return self.passed

    def more(self) -> Self:
        """The same verdict with the rule and the precise hint shown (level 2)."""
        return replace(self, level=2)

    def __repr__(self) -> str:
        return feedback.as_text(self, self.level)

    def _repr_html_(self) -> str:
        return feedback.as_html(self, self.level)


def passed(message: str) -> CheckResult:
    """A pass; the exercise fills in its name."""
    return CheckResult("", True, message)


def failure(message: str, **details) -> CheckResult:
    """A failure (``where``, ``rule``, the reader's value ``got``, ``hint``); the exercise fills in its name."""
    return CheckResult("", False, message, **details)


KEY_MISSING = "the answer key is not here (a class copy leaves it out): your teacher grades this one"


def unverified(exercise: str, done: str) -> CheckResult:
    """What only the key can judge: ``done`` (what the kit did) and who grades it."""
    message = say("{done}; {missing}", done=done, missing=say(KEY_MISSING))
    return CheckResult(exercise, False, message, status="unverified")


def call(candidate, *args):
    """Run the reader's function; every failure becomes a clear ``CandidateProblem`` (NumPy's
    overflow and invalid warnings are silenced: a NaN or an infinity is judged, not warned)."""
    try:
        with np.errstate(all="ignore"):
            return candidate(*args)
    except NotImplementedError as exc:
        detail = f" ({exc})" if str(exc) else ""
        replace_it = say("replace the `raise NotImplementedError` with your code and run the check again")
        text = say("not yet implemented{detail}: {replace_it}", detail=detail, replace_it=replace_it)
        raise NotAttempted(text) from None
    except CandidateProblem:
        raise
    except Exception as exc:  # the reader's code failed: say where, without a traceback wall
        where = _your_line(candidate, exc)
        text = say("your function raised {kind}: {exc}{value}", kind=type(exc).__name__, exc=exc, value=where)
        raise CandidateProblem(text) from None


_KIT = str(Path(__file__).resolve().parents[1])


def _your_line(candidate, exc: Exception) -> str:
    """`` (line 3 of your cell: `return x[5]`)``: the deepest frame in the reader's own file (a
    notebook cell or the --file), never a frame inside NumPy or labkit."""
    function = candidate if inspect.isfunction(candidate) else vars(type(candidate)).get("__call__")
    code = getattr(function, "__code__", None)
    if code is None or code.co_filename.startswith(_KIT):  # a kit's proxy (the sandbox) says where itself
        return ""
    mine = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == code.co_filename]
    if not mine:
        return ""
    cell = "ipykernel" in code.co_filename or code.co_filename.startswith("<")
    text = f": `{mine[-1].line.strip()}`" if mine[-1].line else ""
    place = say(" (line {line} of your cell{text})") if cell else say(" (line {line} of your file{text})")
    return place.format(line=mine[-1].lineno, text=text)


def as_array(value, name: str, shape: tuple[int, ...] | None = None, dtype_kind: str | None = None):
    """The reader's ``value`` as an array of ``shape`` (any when None). ``dtype_kind`` "bool" or
    "float" demands that dtype and no NaN; "number" takes any real numbers as float64 (NaN and
    ±inf too: the comparison judges them)."""
    about = {"name": name, "kind": type(value).__name__}
    try:
        array = np.asarray(value)
    except Exception:
        raise CandidateProblem(say("{name} must be array-like, got {kind}", **about)) from None
    about |= {"dtype": array.dtype, "shape": None if shape is None else list(shape), "shape2": list(array.shape)}
    if array.dtype == object or (dtype_kind == "number" and array.dtype.kind not in "biuf"):
        raise CandidateProblem(say("{name} must hold numbers, got {kind} of dtype {dtype}", **about))
    if shape is not None and array.shape != tuple(shape):
        raise CandidateProblem(say("{name} must have shape {shape}, got {shape2}", **about))
    if dtype_kind == "number":
        return array.astype(np.float64)
    if dtype_kind == "bool" and array.dtype != bool:
        raise CandidateProblem(say("{name} must be a boolean array, got dtype {dtype}", **about))
    if dtype_kind == "float" and not np.issubdtype(array.dtype, np.floating):
        raise CandidateProblem(say("{name} must hold floating-point numbers, got dtype {dtype}", **about))
    if np.issubdtype(array.dtype, np.floating) and np.isnan(array).any():
        first = [int(i) for i in np.argwhere(np.isnan(array))[0]]
        raise CandidateProblem(say("{name} contains NaN (first at index {first})", first=first, **about))
    return array


def unpack(value, names: tuple[str, ...]):
    """The candidate returned a tuple of ``len(names)`` items: check and return it."""
    if not isinstance(value, tuple | list) or len(value) != len(names):
        length = say(" of length {count}", count=len(value)) if isinstance(value, tuple | list) else ""
        fields = {"names": ", ".join(names), "kind": type(value).__name__, "length": length}
        raise CandidateProblem(say("return a tuple ({names}), got {kind}{length}", **fields))
    return value


def yes_or_no(candidate):
    """The reader's check as a piece that must answer True or False."""

    def piece(*args) -> bool:
        answer = call(candidate, *args)
        if not isinstance(answer, bool | np.bool_):
            kind = type(answer).__name__
            raise CandidateProblem(say("your function must return True or False, got {kind}", kind=kind))
        return bool(answer)

    return piece


def agrees(candidate, expected, allowed: float, agree=None) -> tuple[bool, Any]:
    """A reader's value against the run's, type first: a number (an int, a float, a NumPy scalar or a
    0-d array — never a string or a bool) within ``allowed``; True/False (NumPy's too); a word ignoring
    case and spaces, or as ``agree(got, expected)`` judges it (None: the same); a sequence (a list, a
    tuple or a 1-d array) item by item. Returns (agrees, the value as read)."""
    kind = type(candidate).__name__
    if isinstance(expected, bool):
        if isinstance(candidate, np.ndarray) and candidate.shape == () and candidate.dtype == bool:
            candidate = candidate.item()
        if not isinstance(candidate, bool | np.bool_):
            raise CandidateProblem(say("answer True or False, got {kind}", kind=kind))
        return bool(candidate) == expected, bool(candidate)
    if isinstance(expected, str):
        if not isinstance(candidate, str):
            raise CandidateProblem(say("answer with a word (a string), got {kind}", kind=kind))
        word = " ".join(candidate.split()).casefold()
        return (word == expected if agree is None else agree(word, expected) is None), candidate
    if isinstance(expected, tuple | list):
        items = candidate.tolist() if isinstance(candidate, np.ndarray) and candidate.ndim == 1 else candidate
        if not isinstance(items, tuple | list) or len(items) != len(expected):
            shown = feedback.short(candidate)
            text = say("answer with {count} items (a list), got {candidate}", count=len(expected), candidate=shown)
            raise CandidateProblem(text)
        return all(agrees(c, e, allowed)[0] for c, e in zip(items, expected, strict=True)), list(items)
    number = isinstance(candidate, int | float | np.number | np.ndarray)
    if isinstance(candidate, bool | np.bool_ | str | bytes) or not number:
        shown = feedback.short(candidate)
        raise CandidateProblem(say("your value must be one number, got {kind} {candidate}", kind=kind, candidate=shown))
    try:
        got = float(np.asarray(candidate, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        text = say("your value must be one number, got {candidate}", candidate=feedback.short(candidate))
        raise CandidateProblem(text) from None
    if isinstance(expected, int) and not float(got).is_integer():
        return False, got
    return abs(got - float(expected)) <= allowed, got


def exactly(got, expected) -> str | None:
    """Whole values (IDs, words, lists of them) compared as they are: a failure's message, or None."""
    plain = got.tolist() if hasattr(got, "tolist") else list(got) if isinstance(got, tuple | list) else got
    return None if plain == expected else say("differs from the reference")


def _compare(label: str, what: str, got, expected, atol: float, agree) -> CheckResult:
    """One output of one case: ``agree``'s verdict, or numbers of the same shape within ``atol`` (a pass, or
    the first element in C order that differs)."""
    where = say("case “{label}”, {what}", label=label, what=what)
    if agree is not None:
        message = agree(got, expected)
        return passed("") if message is None else failure(message, where=where, got=got)
    expected = np.asarray(expected)
    got = as_array(got, what, dtype_kind="bool" if expected.dtype == bool else "number")
    if got.shape != expected.shape:
        shapes = {"shapes": list(expected.shape), "shapes2": list(got.shape)}
        message = say("at {label}: {what} must have shape {shapes}, got {shapes2}", label=label, what=what, **shapes)
        return failure(message, where=where, rule=say("shape"), got=shapes["shapes2"])
    got, expected = np.atleast_1d(got), np.atleast_1d(expected)  # argwhere finds nothing in a 0-d array
    if got.dtype == bool or expected.dtype == bool:
        bad = np.argwhere(got != expected)
    else:
        infinite = np.isinf(got) & np.isinf(expected) & (np.sign(got) == np.sign(expected))
        bad = np.argwhere(~(np.isclose(got, expected, rtol=0.0, atol=atol) | infinite))
    if bad.size == 0:
        return passed(say("matches the reference"))
    index = tuple(int(i) for i in bad[0])
    message = say("{count} of {size} values differ", count=len(bad), size=got.size)
    where = say("{where}{index}", where=where, index=list(index))
    return failure(message, where=where, rule=say("values within tolerance"), got=got[index].item())


def compare_cases(candidate, cases, reference, *, atol=1e-12, outputs=("result",), first=None, agree=None):
    """The first case and output where ``candidate`` and ``reference`` differ, or a pass. A case is
    (label, args), or (label, args, expected) when the table knows the answer; a tuple result is named
    by ``outputs``, ``first`` compared first; ``agree(got, expected)`` (a message or None) replaces
    the comparison of numbers within ``atol``."""
    count = 0
    for label, args, *known in cases:
        expected = known[0] if known else reference(*copy.deepcopy(args))
        got = call(candidate, *copy.deepcopy(args))
        expected = expected if isinstance(expected, tuple) else (expected,)
        gots = unpack(got, outputs) if len(outputs) > 1 else (got,)
        for what, g, e in sorted(zip(outputs, gots, expected, strict=True), key=lambda item: item[0] != first):
            verdict = _compare(label, what, g, e, atol, agree)
            if not verdict.passed:
                return verdict
        count += 1
    return passed(say("matches on all {count} cases", count=count))


def compare_traces(case: str, expected: list[dict], got: list[dict]) -> CheckResult | None:
    """None when the traces agree; otherwise their first divergence as a failed CheckResult."""
    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    step = say(" (step {step})", step=event["logical_step"]) if event.get("logical_step") is not None else ""
    fields = {"event_id": event["event_id"], "event_type": event["event_type"], "step": step, "case": case}
    where = say("{event_id} {event_type}{step}, field {field} — {case}", field=div.field, **fields)
    return failure(say("your run diverges from the reference run"), where=where, rule=div.rule, got=div.value_b)


class Diverged(Exception):
    """A reader's piece disagreed with the real one inside a run: its failure, carried out of the run."""

    def __init__(self, result: CheckResult):
        super().__init__(result.where)
        self.result = result
