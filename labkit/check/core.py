"""The one engine every exercise runs on: an ``Exercise`` is data, graded here.

Its entry in ``exercises.toml`` says what it asks (kind, task, signature), how it compares
(tolerance; atol, outputs, which first) and its two hint levels (the idea; the rule and where it
breaks, never the answer). ``value``, ``function``, ``table`` and ``trace`` join an entry to the
function of its name they decorate, which computes the rest:

* a **value** (a prediction or a derivation): ``answer()``, what the real kernels compute; the verdict
  shows the run, ``why``; an entry with a ``fault`` is answered by that fault's first divergence;
* **cases**: the reader's function against a hidden ``reference`` (or a table's answers) on ``cases()``;
* **runs**: the reader's piece inside a real runtime, ``runs()`` giving (label, reference events or
  None, ``run(piece) -> events``), failing at the trace's first divergence or where the piece and the
  real one part (``lockstep``). ``hook(candidate)`` is the piece a run (or the cases) calls.

Hint state lives on each exercise object: a second wrong run of the same exercise shows level 2.
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from labkit.check import feedback, grading
from labkit.check.grading import CandidateProblem, CheckResult, failure, passed

registry: dict[str, Exercise] = {}

KINDS = ("predict", "diagnose", "extend", "derive")


@dataclass(eq=False)
class Exercise:
    """One exercise as data: what it asks, what grades it, its two hint levels, its hint state."""

    name: str
    page: str
    kind: str
    task: str
    idea: str
    rule: str = ""
    signature: tuple[str, ...] = ()  # empty: the reader hands in a value
    answer: Callable[[], Any] | None = None
    why: str = ""
    tolerance: float = 0.0
    relative: bool = False
    cases: Callable[[], list] = list
    reference: Callable | None = None
    runs: Callable[[], list] = list
    hook: Callable | None = None
    cases_first: bool = False
    atol: float = 1e-12
    outputs: tuple[str, ...] = ("result",)
    first: str | None = None
    agree: Callable[[Any, Any], str | None] | None = None
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
            self._admit(candidate)
            result = self._grade_value(candidate) if self.is_value else self._grade_function(candidate)
        except CandidateProblem as problem:
            return CheckResult(self.name, False, str(problem))
        result.exercise = self.name
        return self._escalate(result)

    def _admit(self, candidate) -> None:
        """Refuse what cannot be graded: a stub value, a function for a value, the wrong signature."""
        if self.is_value and candidate is Ellipsis:
            raise CandidateProblem("not yet answered: replace the `...` with your value and run the check again")
        if self.is_value and callable(candidate):
            raise CandidateProblem("this exercise takes a value (your prediction), not a function")
        if self.is_value:
            return
        if not callable(candidate):
            raise CandidateProblem(f"expected a function, got {type(candidate).__name__}")
        try:
            signature = inspect.signature(candidate)
        except (TypeError, ValueError):  # a builtin without a signature: its call will tell
            return
        try:
            signature.bind(*self.signature)
        except TypeError:
            names, wanted = ", ".join(signature.parameters), ", ".join(self.signature)
            raise CandidateProblem(f"your function takes ({names}) but the exercise calls it with ({wanted})") from None

    def _grade_value(self, candidate) -> CheckResult:
        expected = self.answer()
        allowed = self.tolerance * abs(expected) if self.relative else self.tolerance
        ok, got = grading.agrees(candidate, expected, allowed)
        shown = self.why.format(answer=expected)
        if ok:
            return passed(f"right — {shown}")
        rule = f"within ±{feedback.short(allowed)} of the run" if allowed else "exactly what the run gives"
        return failure(f"the run disagrees — {shown}", where="your value", rule=rule, got=got, expected=expected)

    def _grade_function(self, candidate) -> CheckResult:
        piece = self.hook or (lambda reader: reader)
        direct = self._grade_cases(piece(candidate)) if self.cases_first else None
        if direct is not None and not direct.passed:
            return direct
        runs = self.runs()
        for label, expected, run in runs:
            reader = piece(candidate)
            try:
                events = run(reader)
            except grading.Diverged as diverged:
                return diverged.result
            failed = None if expected is None else grading.compare_traces(label, expected, events)
            if failed is not None or (failed := getattr(reader, "divergence", None)) is not None:
                return failed
        direct = direct or self._grade_cases(piece(candidate))
        return passed("every run reproduces its reference run") if direct.passed and runs else direct

    def _grade_cases(self, piece) -> CheckResult:
        compare = {"atol": self.atol, "outputs": self.outputs, "first": self.first, "agree": self.agree}
        return grading.compare_cases(piece, self.cases(), self.reference, **compare)

    def _escalate(self, result: CheckResult) -> CheckResult:
        """Attach the idea (and the rule, unless the grading gave a precise one); a second wrong
        answer in a row shows level 2. A stub or a crash is not an attempt at the idea."""
        if result.passed:
            self.wrong_runs = 0
            return result
        result.concept = result.concept or self.idea
        result.hint = result.hint or self.rule or None
        self.wrong_runs += 1
        result.level = 2 if self.wrong_runs >= 2 else 1
        return result

    def __repr__(self) -> str:
        what = f"({', '.join(self.signature)})" if self.signature else " = <your value>"
        return f"{self.kind} exercise {self.name}{what} — {self.task} [{self.page}]"


def register(spec: Exercise) -> Exercise:
    if spec.name in registry:
        raise ValueError(f"exercise {spec.name!r} is registered twice")
    registry[spec.name] = spec
    return spec


def reset_attempts() -> None:
    """Forget every wrong run (the next wrong answer of each exercise shows level 1 again)."""
    for spec in registry.values():
        spec.wrong_runs = 0


CATALOGUE = Path(__file__).with_name("exercises.toml")
_TEXTS = ("task", "idea", "rule", "why")


@lru_cache(maxsize=1)
def catalogue() -> dict[str, dict]:
    """Every exercise's data by name (``exercises.toml``): texts folded to single spaces, lists as tuples."""
    found = tomllib.loads(CATALOGUE.read_text(encoding="utf-8"))
    return {
        name: {
            k: " ".join(v.split()) if k in _TEXTS else tuple(v) if isinstance(v, list) else v for k, v in data.items()
        }
        for name, data in found.items()
    }


def _declare(declared: Callable, **code) -> Exercise:
    """The exercise named after ``declared``: its catalogue entry, graded with ``code``."""
    if declared.__name__ not in catalogue():
        raise ValueError(f"exercise {declared.__name__!r} has no entry in {CATALOGUE.name}")
    data = catalogue()[declared.__name__]
    reference = code.get("reference")
    if reference is declared and tuple(inspect.signature(reference).parameters) != data.get("signature"):
        raise ValueError(f"exercise {declared.__name__!r}: the reference's parameters differ from its signature")
    return register(Exercise(declared.__name__, **data, **code))


def _first_divergence(kind: str, fault: str, read: tuple[str, ...]):
    """The first divergence of ``fault`` from ``kind``'s golden trace: the fields ``read`` of its event."""
    from labkit.trace import catalogue

    div = catalogue.diagnose(kind, fault)
    found = [div.field if key == "field" else (div.event_a or div.event_b)[key] for key in read]
    return found[0] if len(found) == 1 else tuple(found)


def declare_faults() -> None:
    """Register every catalogue entry whose answer is a fault's first divergence: it needs no code."""
    for name, data in catalogue().items():
        if "fault" in data and name not in registry:
            fields = {k: v for k, v in data.items() if k not in ("fault", "read")}
            register(Exercise(name, **fields, answer=partial(_first_divergence, *data["fault"], data["read"])))


def value(answer: Callable[[], Any]) -> Exercise:
    """Declare ``answer()`` — what the real kernels compute — as the value exercise of its name."""
    return _declare(answer, answer=answer)


def function(cases: Callable[[], list], **code) -> Callable[[Callable], Exercise]:
    """Declare the decorated hidden reference as the function exercise of its name on ``cases()``
    (``code``: the ``hook`` the reader's function is called through, the ``agree`` comparison)."""
    return lambda reference: _declare(reference, reference=reference, cases=cases, **code)


def table(**code) -> Callable[[Callable], Exercise]:
    """Declare the decorated ``cases()`` — (label, args, expected) rows — as the function exercise of its name."""
    return lambda rows: _declare(rows, cases=rows, **code)


def trace(runs: Callable[[], list] | None = None, **code):
    """Declare the decorated ``runs()`` as the exercise of its name inside a real runtime (``code``:
    ``hook``, direct ``cases`` and their ``reference``)."""
    return _declare(runs, runs=runs, **code) if runs else lambda found: _declare(found, runs=found, **code)


def hooked(kind: str, hook: str, fault: str | None = None, config=None, **resources) -> Callable[[Any], list[dict]]:
    """``run(piece) -> events``: trace kind ``kind`` (its fixture run with ``fault``, or ``config``)
    with ``piece`` as its hook ``hook``."""

    def run(piece) -> list[dict]:
        from labkit.trace.kinds import kind as trace_kind

        found = trace_kind(kind)
        hooks = found.hooks(**{hook: piece})
        return found.run(config or found.faulty_config(fault), hooks, **resources).events

    return run
