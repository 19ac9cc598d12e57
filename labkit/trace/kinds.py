"""The registry of trace kinds: one ``KINDS.declare`` line per kind, no other list of kind names.

The declaring module (``labkit/<domain>/kind.py``) is imported when the kind is first looked up,
so ``labkit trace text`` pays for text's runtime and no other.
"""

from __future__ import annotations

import importlib
from collections import UserDict

from labkit.core.kinds import TraceKind


class Registry(UserDict):
    """Kind name → ``TraceKind``, in the book's order.  Iterating gives the names without
    importing anything; looking a kind up imports its declaring module once."""

    def __getitem__(self, name: str) -> TraceKind:
        found = self.data[name]  # the kind, or the module that declares it while not imported yet
        if isinstance(found, str):
            found = TraceKind.declared_by(name, importlib.import_module(found))
            self._refuse_a_taken_prefix(found)
            self.data[name] = found
        return found

    def declare(self, name: str, module: str | TraceKind) -> None:
        """Add the kind ``name``, declared by ``module`` (imported when the kind is first used)."""
        if name in self.data:
            raise ValueError(f"trace kind {name!r} is registered twice")
        self.data[name] = module

    def register(self, kind: TraceKind) -> TraceKind:
        """Add a ready ``kind``; a name or event prefix already taken is refused."""
        if not isinstance(kind, TraceKind):
            raise ValueError(f"kind must be a TraceKind, got {type(kind).__name__}")
        self._refuse_a_taken_prefix(kind)
        self.declare(kind.name, kind)
        return kind

    def _refuse_a_taken_prefix(self, kind: TraceKind) -> None:
        """A ValueError if another imported kind has ``kind``'s event prefix (a declared kind is
        checked when it is imported)."""
        for other in self.data.values():
            if isinstance(other, TraceKind) and other.name != kind.name:
                if other.contract.event_prefix == kind.contract.event_prefix:
                    raise ValueError(f"trace kind {kind.name!r}: event prefix {kind.contract.event_prefix!r} is taken")


#: kind name → ``TraceKind``, in the book's order
KINDS = Registry()
register = KINDS.register


def kind(name: str) -> TraceKind:
    """The registered kind ``name``, or a ValueError listing the kinds."""
    if name not in KINDS:
        raise ValueError(f"unknown trace kind {name!r}; expected one of {list(KINDS)}")
    return KINDS[name]


def run(name: str, fault: str | None = None, hooks=None, **resources):
    """The one way to run any registered kind: its fixture config with ``fault`` applied (None:
    the correct run), under ``hooks``; ``resources`` go to the kind's runner as keywords."""
    found = kind(name)
    return found.run(found.faulty_config(fault), hooks, **resources)


KINDS.declare("text", "labkit.text.kind")
KINDS.declare("diffusion", "labkit.diffusion.kind")
KINDS.declare("tool", "labkit.tools.kind")
