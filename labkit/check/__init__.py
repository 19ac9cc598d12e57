"""Self-checking exercises: ``labkit.check.<exercise>(answer)``.

Four kinds: *predict* (commit to a number, ID, shape, event or verdict before running),
*diagnose* (find the first divergence of a faulty trace or function), *extend* (a variant the
page does not show and the kit does not contain), *derive* (a closed form worked out by hand).
A prediction or a derivation is a value; the others are functions.

Every exercise is data run by one engine (``core``): ``value`` compares a reader's value with
what the real kernels compute, at a stated tolerance, then shows the run and why; ``function``
runs the reader's function on cases against a hidden reference and reports the first
divergence (case, index, both values); ``trace`` puts the reader's piece inside a real runtime
and compares its events with the reference trace, or compares the piece with the runtime's own
call by call (``lockstep``), stopping at the first divergence; ``exercise`` registers the few
custom gradings left (a named fault, a damaged report, a fit checked on measured series). Hints come in
two levels per exercise object: the idea, then the rule and where it breaks.

The modules of this package hold the exercises (one per page or mechanism; ``traces`` and
``labs`` the predictions, derivations and variants); they are found on first use, so
``import labkit.check`` stays cheap.
"""

from __future__ import annotations

import importlib
import pkgutil

from labkit.check.core import CheckResult, ExerciseSpec, exercise, registry

__all__ = ["CheckResult", "ExerciseSpec", "exercise", "exercises"]


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("core", "grading") and not info.name.startswith("_"):
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
