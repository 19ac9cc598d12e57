"""The registry of trace kinds: ``KINDS``, one line per kind's ``TraceKind`` (imported from its
``labkit/<domain>/kind.py``), and the §7.16 table generated from the kinds' contracts."""

from collections.abc import Iterable

from labkit.core.kinds import TraceContract, TraceKind
from labkit.diffusion.kind import DIFFUSION
from labkit.text.kind import TEXT
from labkit.tools.kind import TOOL


def table(kinds: Iterable[TraceKind]) -> dict[str, TraceKind]:
    """Name → kind, in the order given; a name or an event prefix given twice is a ValueError."""
    found: dict[str, TraceKind] = {}
    for kind in kinds:
        if kind.name in found:
            raise ValueError(f"trace kind {kind.name!r} is registered twice")
        if any(k.contract.event_prefix == kind.contract.event_prefix for k in found.values()):
            raise ValueError(f"trace kind {kind.name!r}: event prefix {kind.contract.event_prefix!r} is taken")
        found[kind.name] = kind
    return found


#: kind name → ``TraceKind``, in the book's order
KINDS = table(
    (
        TEXT,
        DIFFUSION,
        TOOL,
    )
)


def kind(name: str) -> TraceKind:
    """The registered kind ``name``, or a ValueError listing the kinds."""
    if name not in KINDS:
        raise ValueError(f"unknown trace kind {name!r}; expected one of {list(KINDS)}")
    return KINDS[name]


def run_kind(name: str, fault: str | None = None, hooks=None, **resources):
    """Run kind ``name``'s fixture config with ``fault`` applied (None: the correct run) under ``hooks``;
    ``resources`` go to its runner as keywords."""
    found = kind(name)
    return found.run(found.faulty_config(fault), hooks, **resources)


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
    """The §7.16 comparison of the registered contracts: (headers, rows)."""
    contracts = [kind.contract for kind in KINDS.values()]
    rows = [[question] + [getattr(c, attr) for c in contracts] for attr, question in CONTRACT_ROWS]
    rows.append(["What “output” means"] + [c.output_means for c in contracts])
    return ["question"] + [f"{c.kind.capitalize()} trace" for c in contracts], rows
