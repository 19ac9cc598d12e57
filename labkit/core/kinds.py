"""What a trace kind is, as one value: ``TraceKind`` (and its §7.16 contract, ``TraceContract``).

A domain declares its kind in ``labkit/<domain>/kind.py`` as one ``TraceKind`` value;
``labkit.trace.kinds`` registers it in one line of its table.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.core.faults import RULES, Fault, configure


@dataclass(frozen=True)
class TraceContract:
    kind: str
    event_prefix: str
    initial_object: str
    model_state: str
    runtime_update: str
    irreversible_point: str
    random_entry: str
    termination: str
    replay_core: str
    #: what "output" means for this kind (§7.16's closing remark)
    output_means: str
    #: tensors are compared with this absolute tolerance on their summaries and values
    #: (payloads round floats to 4 decimals, so the tolerance is one step coarser)
    tensor_atol: float = 1e-3
    #: (event_type, rule) → suspect component; "*" matches any event type
    suspects: dict[tuple[str, str], str] = field(default_factory=dict)
    #: component → suspect, when no (event_type, rule) entry matches
    component_suspects: dict[str, str] = field(default_factory=dict)
    #: payload field (prefix) → suspect; the most specific evidence, checked first
    field_suspects: dict[str, str] = field(default_factory=dict)
    #: events where a decision is taken from tensors carried in the same event: if those
    #: tensors differ too, the decision is not to blame (§7.5: same raw logits, other choice)
    decision_events: tuple[str, ...] = ()
    #: the event type the other trace took instead (a branch) → suspect
    branch_suspects: dict[str, str] = field(default_factory=dict)

    def suspect(
        self,
        event_type: str,
        component: str,
        rule: str,
        tensors_equal: bool,
        field_name: str = "",
        other_event_type: str | None = None,
    ) -> str:
        """Name the component to inspect first (the diagnosis rules of §7.5 for text)."""
        if rule == "event_type_and_parent" and other_event_type in self.branch_suspects:
            return self.branch_suspects[other_event_type]
        if rule == "discrete_state" and not tensors_equal and event_type in self.decision_events:
            # the numbers feeding this decision already differ: look upstream of it
            key = (event_type, "tensors")
            if key in self.suspects:
                return self.suspects[key]
        for prefix, suspect in self.field_suspects.items():
            if field_name.startswith(prefix):
                return suspect
        for key in ((event_type, rule), ("*", rule)):
            if key in self.suspects:
                return self.suspects[key]
        return self.component_suspects.get(component, f"the {component} component")

    def __post_init__(self):
        for event_type, rule in self.suspects:
            if rule not in RULES:
                raise ValueError(f"{self.kind} contract: rule {rule!r} of {event_type!r} must be one of {RULES}")


@dataclass(frozen=True)
class TraceKind:
    """One kind of trace: everything the registry's users need to know of it."""

    #: the word after ``labkit trace``, the key of the catalogue and of the contracts
    name: str
    #: one line for ``labkit trace --help``
    help: str
    config: type
    hooks: type
    #: ``run(config=None, hooks=None, *, resources…) -> Run`` (``labkit.core.runtime``'s shape)
    run: Callable[..., Any]
    contract: TraceContract
    faults: Mapping[str, Fault]
    #: its fixture folder, ``fixtures/<fixture>/`` (``labkit fixtures --only <name>`` stands for it), written
    #: with its golden trace ``fixtures/traces/<name>.jsonl`` by the book's recipe of the folder's name
    #: (``booktools/recipes/``)
    fixture: str
    #: ``summary(run, fault) -> lines`` printed by ``labkit trace KIND``
    summary: Callable[[Any, str | None], list[str]]
    #: the JSONL file ``labkit trace KIND`` writes without ``--out`` (``trace_id[-fault].jsonl``)
    writes_by_default: bool = True
    #: extra files a run can write: option name → (help, ``write(run, path) -> path``)
    outputs: Mapping[str, tuple[str, Callable[[Any, Path], Path]]] = field(default_factory=dict)
    #: (name, what it is) of the correct run, when the kind calls it a scenario (``--scenario``)
    baseline: tuple[str, str] | None = None
    #: its contract as clauses on its events (``labkit.core.clauses``; ``labkit.trace.clauses``)
    clauses: tuple = ()

    def __post_init__(self):
        if self.contract.kind != self.name:
            raise ValueError(f"trace kind {self.name!r} has the contract of {self.contract.kind!r}")

    def faulty_config(self, name: str | None, base=None):
        """``base`` (default: the fixture run's config) with fault ``name`` applied (None: unchanged)."""
        return configure(self.faults, self.name, name, base or self.config())
