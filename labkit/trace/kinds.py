"""The registry of trace kinds: one line per kind (``labkit/<domain>/kind.py`` declares it).

``labkit trace KIND``, the fault catalogue, the §7.16 contracts and ``labkit fixtures``
read ``KINDS``; no other module keeps a list of kind names.  A new kind is its own module
plus one ``register`` line here.
"""

from __future__ import annotations

from labkit.core.kinds import TraceKind
from labkit.diffusion.kind import DIFFUSION
from labkit.text.kind import TEXT
from labkit.tools.kind import TOOL

#: kind name → ``TraceKind``, in the book's order
KINDS: dict[str, TraceKind] = {}


def register(kind: TraceKind) -> TraceKind:
    """Add ``kind`` to the registry; a name or event prefix already taken is refused."""
    if not isinstance(kind, TraceKind):
        raise ValueError(f"kind must be a TraceKind, got {type(kind).__name__}")
    prefixes = {k.contract.event_prefix: k.name for k in KINDS.values()}
    if kind.name in KINDS or kind.contract.event_prefix in prefixes:
        raise ValueError(f"trace kind {kind.name!r} (event prefix {kind.contract.event_prefix!r}) is registered twice")
    KINDS[kind.name] = kind
    return kind


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


register(TEXT)
register(DIFFUSION)
register(TOOL)
