"""Self-checking exercises: ``labkit.check.<exercise>(answer)``.

Four kinds: *predict* (commit to a number, ID, shape, event or verdict before running), *diagnose*
(find the first divergence of a faulty trace or function), *extend* (a variant the page does not
show and the kit does not contain), *derive* (a closed form worked out by hand). Each is data —
``exercises.toml`` — joined to the Python that computes its answer, reference, cases or runs (the
other modules, found on first use) and run by one engine, ``core``.
"""

from __future__ import annotations

import importlib
import pkgutil

from labkit.check.core import CheckResult, Exercise, catalogue, declare_faults, registry

__all__ = ["CheckResult", "Exercise", "exercises"]


def exercises() -> dict[str, Exercise]:
    """Every exercise of the book, by name."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("core", "grading", "feedback") and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    declare_faults()
    if unwritten := sorted(set(catalogue()) - set(registry)):
        raise ValueError(f"exercises.toml lists exercises no module declares: {unwritten}")
    return dict(sorted(registry.items()))


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(name)
    specs = exercises()
    if name in specs:
        return specs[name]
    raise AttributeError(f"labkit.check has no exercise {name!r}; known: {', '.join(specs)}")
