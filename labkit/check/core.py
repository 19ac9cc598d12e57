"""The one engine every exercise runs on: an ``Exercise`` is data, its entry in ``exercises.toml`` (what it
asks, how it compares, its two hint levels — the idea; the rule and where it breaks, never the answer — and
its points), graded here. Code is attached by one decorator per part, to the exercise of the decorated
function's name: ``@properties`` (the public check, in ``labkit/check/``), a prediction's ``@value``, and
the teacher's key's ``@value``, ``@function``, ``@table``, ``@trace`` (``answer_key/``, never the kit).
A verdict never carries the expected value: ``reveal()`` shows it and marks the exercise revealed.
"""

import inspect
import tomllib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from labkit.check import feedback, grading
from labkit.check.feedback import Revealed, say
from labkit.check.grading import KEY_MISSING, CandidateProblem, CheckResult, NotAttempted, failure, passed, unverified
from labkit.trace.catalogue import diagnose
from labkit.trace.kinds import kind as trace_kind

KINDS = ("predict", "diagnose", "extend", "derive")
#: what the key (or, for a prediction, the kit) attaches: the parts that know the answer
ANSWER_PARTS = ("answer", "reference", "cases", "runs")
SIGNATURE = "your function takes ({names}) but the exercise calls it with ({wanted})"


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
    points: float | None = None  # None: 1, or 0 for a prediction (a self-test)
    why: str = ""
    tolerance: float = 0.0
    relative: bool = False
    atol: float = 1e-12
    outputs: tuple[str, ...] = ("result",)
    first: str | None = None
    # the public check and how the reader's function is called
    properties: Callable[[Any], CheckResult | None] | None = None
    hook: Callable | None = None
    agree: Callable[[Any, Any], str | None] | None = None
    # what knows the answer: the key's (a prediction's answer is the kit's)
    answer: Callable[[], Any] | None = None
    cases: Callable[[], list] | None = None
    reference: Callable | None = None
    runs: Callable[[], list] | None = None
    wrong_runs: int = field(default=0, repr=False)
    revealed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"exercise {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.task or not self.idea:
            raise ValueError(f"exercise {self.name!r} needs a task and an idea (the first-level hint)")
        if self.points is None:
            self.points = 0.0 if self.kind == "predict" else 1.0
        if not (isinstance(self.points, int | float) and self.points >= 0):
            raise ValueError(f"exercise {self.name!r}: points must be a number ≥ 0, got {self.points!r}")

    @property
    def is_value(self) -> bool:
        """A prediction or a derived value (``check.name(value)``), not a function."""
        return not self.signature

    @property
    def graded(self) -> bool:
        """Counted in a class's grade (a prediction is a self-test unless a teacher gives it points)."""
        return self.points > 0

    @property
    def keyed(self) -> bool:
        """Whether what knows the answer is here (the key loaded, or a prediction)."""
        return any(getattr(self, part) is not None for part in ANSWER_PARTS)

    def __call__(self, candidate) -> CheckResult:
        try:
            self._admit(candidate)
            result = self._grade_value(candidate) if self.is_value else self._grade_function(candidate)
        except NotAttempted as stub:
            return CheckResult(self.name, False, str(stub), status="not attempted")
        except CandidateProblem as problem:
            return CheckResult(self.name, False, str(problem), revealed=self.revealed)
        result.exercise, result.revealed = self.name, self.revealed
        return self._escalate(result)

    def _admit(self, candidate) -> None:
        """Refuse what cannot be graded: a stub value, a function for a value, the wrong signature."""
        if self.is_value and candidate is Ellipsis:
            raise NotAttempted(say("not yet answered: replace the `...` with your value and run the check again"))
        if self.is_value and callable(candidate):
            raise CandidateProblem(say("this exercise takes a value (your prediction), not a function"))
        if self.is_value:
            return
        if not callable(candidate):
            raise CandidateProblem(say("expected a function, got {kind}", kind=type(candidate).__name__))
        try:
            signature = inspect.signature(candidate)
        except (TypeError, ValueError):  # a builtin without a signature: its call will tell
            return
        try:
            signature.bind(*self.signature)
        except TypeError:
            names, wanted = ", ".join(signature.parameters), ", ".join(self.signature)
            raise CandidateProblem(say(SIGNATURE, names=names, wanted=wanted)) from None

    def _grade_value(self, candidate) -> CheckResult:
        found = self.properties(candidate) if self.properties else None
        if found is not None:
            return found
        if self.answer is None:
            return unverified(self.name, say("your value is recorded"))
        expected = self.answer()
        allowed = self.tolerance * abs(expected) if self.relative else self.tolerance
        ok, got = grading.agrees(candidate, expected, allowed, self.agree)
        if ok:
            why = self.text("why").format(answer=expected)
            return passed(say("right — {why}", why=why) if why else say("right"))
        stated = f"{feedback.short(100 * self.tolerance)} %" if self.relative else feedback.short(allowed)
        rule = say("within ±{stated} of the run", stated=stated) if allowed else say("exactly what the run gives")
        return failure(say("the run disagrees with your value"), rule=rule, got=got)

    def _grade_function(self, candidate) -> CheckResult:
        piece = self.hook or _guarded
        found = self.properties(piece(candidate)) if self.properties else None
        if found is not None:
            return found
        if not self.keyed:
            if self.properties:
                return passed(say("every property the checker tests holds"))
            return unverified(self.name, say("your function runs"))
        runs = self.runs() if self.runs else []
        for label, expected, run in runs:
            reader = piece(candidate)
            try:
                events = run(reader)
            except grading.Diverged as diverged:
                return diverged.result
            failed = None if expected is None else grading.compare_traces(label, expected, events)
            if failed is not None or (failed := getattr(reader, "divergence", None)) is not None:
                return failed
        if not self.cases:
            return passed(say("every run reproduces its reference run"))
        compare = {"atol": self.atol, "outputs": self.outputs, "first": self.first, "agree": self.agree}
        direct = grading.compare_cases(piece(candidate), self.cases(), self.reference, **compare)
        return passed(say("every run reproduces its reference run")) if direct.passed and runs else direct

    def _escalate(self, result: CheckResult) -> CheckResult:
        """Attach the idea (and the rule, unless the grading gave a precise one); a second wrong
        answer in a row shows level 2. A stub or a crash is not an attempt at the idea."""
        if result.passed or result.status == "unverified":
            self.wrong_runs = 0 if result.passed else self.wrong_runs
            return result
        result.concept = result.concept or self.text("idea")
        result.hint = result.hint or self.text("rule") or None
        self.wrong_runs += 1
        result.level = 2 if self.wrong_runs >= 2 else 1
        return result

    def reveal(self) -> Revealed:
        """The answer (the value and the run that gives it, or the reference's code); every later verdict says so."""
        if self.answer is not None:
            value = self.answer()
            shown = self.text("why").format(answer=value) if self.why else feedback.short(value, None)
            text = f"{feedback.short(value, None)} — {shown}"
        elif self.reference is not None:
            text = inspect.getsource(self.reference)
        elif self.cases is not None:
            text = "\n".join(f"{label}: {feedback.short(rows[0])}" for label, _, *rows in self.cases())
        else:
            raise LookupError(f"{self.name}: {say(KEY_MISSING)}")
        self.revealed = True
        return Revealed(self.name, text)

    def text(self, part: str) -> str:  # task, idea, rule or why, in the edition's language
        return feedback.exercise_text(self.name, part, getattr(self, part))

    def __repr__(self) -> str:
        return feedback.describe(self)


def _guarded(reader: Callable) -> Callable:
    """The reader's function as the checks call it: a crash or a stub becomes a clear verdict."""
    return partial(grading.call, reader)


CATALOGUE = Path(__file__).with_name("exercises.toml")
_TEXTS = ("task", "idea", "rule", "why")
_DATA = {f.name for f in fields(Exercise)} - {*ANSWER_PARTS, "properties", "hook", "agree", "wrong_runs", "revealed"}


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


@lru_cache(maxsize=1)
def registry() -> dict[str, Exercise]:
    """Every exercise of the catalogue, by name (a fault prediction answered by its fault's first divergence)."""
    made = {}
    for name, data in catalogue().items():
        unknown = set(data) - _DATA - {"fault", "read"}
        if unknown:
            raise ValueError(f"exercises.toml: {name} has fields no exercise reads: {sorted(unknown)}")
        exercise = Exercise(name, **{k: v for k, v in data.items() if k in _DATA})
        if "fault" in data:
            exercise.answer = partial(_first_divergence, *data["fault"], data["read"])
        made[name] = exercise
    return made


def attach(name: str, **parts) -> Exercise:
    """Join ``parts`` (code that judges) to the catalogue's exercise ``name``; each part once."""
    exercise = registry().get(name)
    if exercise is None:
        raise ValueError(f"exercise {name!r} has no entry in {CATALOGUE.name}")
    for part, code in parts.items():
        if getattr(exercise, part) not in (None, False) and getattr(exercise, part) is not code:
            raise ValueError(f"exercise {name!r}: its {part} is attached twice")
        setattr(exercise, part, code)
    return exercise


@contextmanager
def without_key():
    """Every exercise as a class copy sees it: the key's parts (code from outside ``labkit``) set aside, then back."""
    kept = {}
    for name, exercise in registry().items():
        for part in ANSWER_PARTS:
            code = getattr(exercise, part)
            code = code.func if isinstance(code, partial) else code  # a fault prediction: the kit's own
            if not getattr(code, "__module__", "labkit").startswith("labkit"):
                kept[name, part] = getattr(exercise, part)
    for name, part in kept:
        setattr(registry()[name], part, None)
    try:
        yield
    finally:
        for (name, part), code in kept.items():
            setattr(registry()[name], part, code)


def reset_attempts() -> None:
    """Forget every wrong run and reveal (the next wrong answer of each exercise shows level 1 again)."""
    for exercise in registry().values():
        exercise.wrong_runs, exercise.revealed = 0, False


def _first_divergence(kind: str, fault: str, read: tuple[str, ...]):
    """The first divergence of ``fault`` from ``kind``'s golden trace: the fields ``read`` of its event."""
    div = diagnose(kind, fault)
    found = [div.field if key == "field" else (div.event_a or div.event_b)[key] for key in read]
    return found[0] if len(found) == 1 else tuple(found)


def properties(**code) -> Callable[[Callable], Exercise]:
    """Declare the decorated ``check(piece) -> CheckResult | None`` as the public check of the exercise
    of its name (``code``: the ``hook`` the reader's function is called through, an ``agree``)."""
    return lambda check: attach(check.__name__, properties=check, **code)


def value(answer: Callable[[], Any]) -> Exercise:
    """Declare ``answer()`` — what the real kernels compute — as the answer of the exercise of its name."""
    return attach(answer.__name__, answer=answer)


def function(cases: Callable[[], list], **code) -> Callable[[Callable], Exercise]:
    """Declare the decorated hidden reference of the exercise of its name, compared on ``cases()``
    (``code``: the ``hook`` the reader's function is called through, the ``agree`` comparison)."""

    def declare(reference: Callable) -> Exercise:
        wanted = catalogue().get(reference.__name__, {}).get("signature")
        if tuple(inspect.signature(reference).parameters) != wanted:
            raise ValueError(f"exercise {reference.__name__!r}: the reference's parameters differ from its signature")
        return attach(reference.__name__, reference=reference, cases=cases, **code)

    return declare


def table(**code) -> Callable[[Callable], Exercise]:
    """Declare the decorated ``cases()`` — (label, args, expected) rows — as the exercise of its name."""
    return lambda rows: attach(rows.__name__, cases=rows, **code)


def trace(**code) -> Callable[[Callable], Exercise]:
    """Declare the decorated ``runs()`` as the exercise of its name inside a real runtime (``code``:
    ``hook``, direct ``cases`` and their ``reference``)."""
    return lambda runs: attach(runs.__name__, runs=runs, **code)


def hooked(kind: str, hook: str, fault: str | None = None, config=None, **resources) -> Callable[[Any], list[dict]]:
    """``run(piece) -> events``: trace kind ``kind`` (its fixture run with ``fault``, or ``config``)
    with ``piece`` as its hook ``hook``."""

    def run(piece) -> list[dict]:
        found = trace_kind(kind)
        hooks = found.hooks(**{hook: piece})
        return found.run(config or found.faulty_config(fault), hooks, **resources).events

    return run
