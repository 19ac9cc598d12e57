"""Self-checking exercises: ``labkit.check.<exercise>(candidate)``.

The reader writes a piece of a mechanism; the checker runs it inside the real runtime (or
against the fixtures) and reports either a pass or the first place where it diverges from
the reference — the event or position, the rule, both values — with a hint that points at
the concept, never at the reference code.

A numeric checker feeds the reader's function the lab's own inputs and a few edge cases
(always copies), compares with labkit's reference and stops at the first divergence; a trace
checker runs the reader's piece inside the real runtime and compares the events with the
golden trace.  Hints name the idea that was missed, recognising the usual mistakes.

Exercises are plain functions decorated with ``@exercise`` in the modules of this package
(one per page or mechanism; shared plumbing in ``core`` and ``_support``); they are found on
first use, so ``import labkit.check`` stays cheap.
"""

from __future__ import annotations

import importlib
import pkgutil

from labkit.check.core import CheckResult, ExerciseSpec, exercise, registry

__all__ = ["CheckResult", "ExerciseSpec", "exercise", "exercises"]


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name != "core" and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def exercises() -> dict[str, ExerciseSpec]:
    """Every exercise of the book, by name."""
    _discover()
    return dict(sorted(registry.items()))


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    specs = exercises()
    if name in specs:
        return specs[name]
    raise AttributeError(f"labkit.check has no exercise {name!r}; known: {', '.join(specs)}")
