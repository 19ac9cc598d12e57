"""The registry of trace kinds: one ``KINDS.declare`` line per kind, no other list of kind names,
and what each kind promises, the state/update/terminal contract of §7.16.

The declaring module (``labkit/<domain>/kind.py``) is imported when the kind is first looked up,
so ``labkit trace text`` pays for text's runtime and no other.  Traces of different kinds are never
compared step by step; the table of §7.16 is generated from the kinds' contracts.
"""

from __future__ import annotations

import importlib
from collections import UserDict

from labkit.core.kinds import TraceContract, TraceKind


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
        """Add the kind ``name``: the module that declares it (imported when the kind is first
        used) or a ready ``TraceKind`` (whose event prefix must not be taken)."""
        if name in self.data:
            raise ValueError(f"trace kind {name!r} is registered twice")
        if isinstance(module, TraceKind):
            self._refuse_a_taken_prefix(module)
        self.data[name] = module

    def _refuse_a_taken_prefix(self, kind: TraceKind) -> None:
        """A ValueError if another imported kind has ``kind``'s event prefix (a declared kind is
        checked when it is imported)."""
        for other in self.data.values():
            if isinstance(other, TraceKind) and other.name != kind.name:
                if other.contract.event_prefix == kind.contract.event_prefix:
                    raise ValueError(f"trace kind {kind.name!r}: event prefix {kind.contract.event_prefix!r} is taken")


#: kind name → ``TraceKind``, in the book's order
KINDS = Registry()


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

#: rows of the §7.16 table: (contract attribute, the question it answers)
CONTRACT_ROWS = (
    ("initial_object", "Initial fixed object"),
    ("model_state", "Model state"),
    ("runtime_update", "Runtime update"),
    ("irreversible_point", "Irreversible point"),
    ("random_entry", "Where randomness enters"),
    ("termination", "Termination"),
    ("replay_core", "Replay core"),
)


def contract_for(events: list[dict]) -> TraceContract:
    """The contract of a trace, recognised by its event-ID prefix."""
    if not events:
        raise ValueError("an empty trace has no kind")
    by_prefix = {kind.contract.event_prefix: kind.contract for kind in KINDS.values()}
    prefix = events[0]["event_id"][0]
    if prefix not in by_prefix:
        raise ValueError(
            f"event IDs starting with {prefix!r} belong to no known trace kind (expected one of {sorted(by_prefix)})"
        )
    return by_prefix[prefix]


def state_rows() -> tuple[list[str], list[list[str]]]:
    """The §7.16 comparison, generated from the registered contracts: (headers, rows).
    ``labkit.reader.tables.state_table()`` shows it as a table."""
    contracts = [kind.contract for kind in KINDS.values()]
    rows = [[question] + [getattr(c, attr) for c in contracts] for attr, question in CONTRACT_ROWS]
    rows.append(["What “output” means"] + [c.output_means for c in contracts])
    return ["question"] + [f"{c.kind.capitalize()} trace" for c in contracts], rows
