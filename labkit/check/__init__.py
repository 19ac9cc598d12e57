"""Self-checking exercises: ``labkit.check.<exercise>(answer)``; ``labkit.check.reveal(name)``.

Four kinds: *predict* (a self-test the next cell answers), *diagnose* (a faulty trace's or function's first
divergence), *extend* (a variant the kit does not contain), *derive* (a closed form worked out by hand). Each
is data (``exercises.toml``) joined to its public check, run by one engine, ``core``; what knows a graded
answer is the teacher's key (``answer_key/`` beside the kit, never inside it): a class copy leaves it out.
"""

from labkit.check import (
    labs_i,
    labs_i_cache,
    labs_ii,
    labs_ii_serving,
    labs_ii_speculative,
    serving,
    trace_one,
    trace_one_decode,
    trace_three,
    trace_three_runs,
    trace_three_service,
    trace_two,
)
from labkit.check.core import CheckResult, Exercise, Revealed, registry

__all__ = ["CheckResult", "Exercise", "exercises", "reveal"]

#: the modules holding the exercises' public checks (each attaches its own); a new group is its module and one line here
GROUPS = (
    labs_i,
    labs_i_cache,
    labs_ii,
    labs_ii_serving,
    labs_ii_speculative,
    serving,
    trace_one,
    trace_one_decode,
    trace_three,
    trace_three_runs,
    trace_three_service,
    trace_two,
)


def exercises() -> dict[str, Exercise]:
    """Every exercise of the book, by name."""
    return dict(sorted(registry().items()))


def reveal(name: str) -> Revealed:
    """Show the answer of exercise ``name`` on purpose (it is then recorded as revealed)."""
    specs = exercises()
    if name not in specs:
        raise ValueError(f"name must be an exercise of the book, got {name!r}; `labkit check` lists them")
    return specs[name].reveal()


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    specs = exercises()
    if name in specs:
        return specs[name]
    raise AttributeError(f"labkit.check has no exercise {name!r}; known: {', '.join(specs)}")
