"""What each kind of trace promises: the state/update/terminal contract of §7.16.

Traces of different kinds are never compared step by step; each kind declares its contract in its
``kind.py``, and the table of §7.16 is generated from those declarations.
"""

from __future__ import annotations

from labkit.core.kinds import TraceContract as TraceContract  # re-exported: the divergence algorithm reads it
from labkit.trace.kinds import KINDS

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


def __getattr__(name: str):
    if name == "CONTRACTS":  # kind → contract, read from the registry each time
        return {kind.name: kind.contract for kind in KINDS.values()}
    raise AttributeError(f"module 'labkit.trace.contracts' has no attribute {name!r}")


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
