"""The first-divergence algorithm of §7.17.

Walk two traces of the same kind in event order.  For each pair of events compare, in
this order, and stop at the first failure:

1. ``event_type_and_parent`` — event type, component, logical step and parent relation;
2. ``artifact_ids``          — immutable artifact IDs (``payload["artifacts"]``);
3. ``discrete_state``        — every other payload field, exactly;
4. ``tensors``               — ``payload["tensors"]``: shape, dtype, position, level and digest
   exactly, summaries and values under the contract's declared tolerance;
5. ``rng_counter``           — the RNG counter before any random choice (``payload["rng"]``);
6. ``external_commit``       — external commit and result identity (``payload["commit"]``).

Later differences are usually consequences of the first one, so the algorithm reports
only that one, with the values on both sides and the component to suspect.  Traces of
different kinds are refused: they are compared through their contracts, not step by step.
"""

import math
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from labkit.core.events import validate_trace
from labkit.core.faults import RULES as RULES  # re-exported: the six rules, named once
from labkit.core.faults import FirstDivergence
from labkit.core.kinds import TraceContract
from labkit.trace.kinds import contract_for

_RESERVED = ("artifacts", "tensors", "rng", "commit")
_MISSING = "<absent>"


class TraceKindMismatch(ValueError):
    """Two traces of different kinds: compare their contracts instead."""


@dataclass(frozen=True)
class Divergence:
    """The first failed comparison between two traces."""

    index: int
    event_a: dict | None
    event_b: dict | None
    rule: str
    field: str
    value_a: Any
    value_b: Any
    suspect: str
    kind: str

    @property
    def event_ids(self) -> tuple[str | None, str | None]:
        return (self.event_a or {}).get("event_id"), (self.event_b or {}).get("event_id")

    @property
    def at(self) -> FirstDivergence:
        """Where it happened, in the vocabulary a fault declares its expectation in."""
        a, b = self.event_ids
        return FirstDivergence(b or a, self.rule, self.field, self.suspect)

    def describe(self) -> str:
        a, b = self.event_ids
        what = (self.event_a or self.event_b or {}).get("event_type", "?")
        rows = {"rule": self.rule, "field": self.field, "A": _short(self.value_a), "B": _short(self.value_b)}
        rows["suspect"] = self.suspect
        header = f"first divergence in the {self.kind} trace at event #{self.index} ({a or '—'} vs {b or '—'}, {what})"
        return "\n".join([header, *(f"  {name:<8}: {value}" for name, value in rows.items())])

    __str__ = describe


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_difference(a: Any, b: Any, path: str, atol: float | None) -> tuple[str, Any, Any] | None:
    """Depth-first: the first leaf where ``a`` and ``b`` differ (numbers within ``atol``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                return sub, a.get(key, _MISSING), b.get(key, _MISSING)
            found = _first_difference(a[key], b[key], sub, atol)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length)", a, b
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{i}]", atol)
            if found:
                return found
        return None
    if atol is not None and all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)):
        close = math.isclose(a, b, rel_tol=0.0, abs_tol=atol) or (a != a and b != b)  # NaN matches NaN
        return None if close else (path, a, b)
    if type(a) is not type(b) or a != b:
        return path, a, b
    return None


def _exact_part(tensor: dict) -> dict:
    return {k: v for k, v in tensor.items() if k not in ("summary", "values")}


def _tensor_difference(ta: dict, tb: dict, atol: float) -> tuple[str, Any, Any] | None:
    for name in list(ta) + [n for n in tb if n not in ta]:
        if name not in ta or name not in tb:
            return f"tensors.{name}", ta.get(name, _MISSING), tb.get(name, _MISSING)
        found = _first_difference(_exact_part(ta[name]), _exact_part(tb[name]), f"tensors.{name}", None)
        if found:
            return found
        numbers_a = {k: ta[name].get(k) for k in ("summary", "values")}
        numbers_b = {k: tb[name].get(k) for k in ("summary", "values")}
        found = _first_difference(numbers_a, numbers_b, f"tensors.{name}", atol)
        if found:
            return found
    return None


def compare_events(a: dict, b: dict, contract: TraceContract) -> tuple[str, str, Any, Any] | None:
    """The first failed rule for one event pair: (rule, field, value_a, value_b) or None."""
    for key in ("event_type", "component", "logical_step"):
        if a[key] != b[key]:
            return "event_type_and_parent", key, a[key], b[key]
    if a["parent_event_id"] != b["parent_event_id"]:
        return ("event_type_and_parent", "parent_event_id", a["parent_event_id"], b["parent_event_id"])
    pa, pb = a["payload"], b["payload"]
    found = _first_difference(pa.get("artifacts", {}), pb.get("artifacts", {}), "artifacts", None)
    if found:
        return ("artifact_ids", *found)
    discrete_a = {k: v for k, v in pa.items() if k not in _RESERVED}
    discrete_b = {k: v for k, v in pb.items() if k not in _RESERVED}
    found = _first_difference(discrete_a, discrete_b, "", None)
    if found:
        return ("discrete_state", *found)
    found = _tensor_difference(pa.get("tensors", {}), pb.get("tensors", {}), contract.tensor_atol)
    if found:
        return ("tensors", *found)
    found = _first_difference(pa.get("rng", {}), pb.get("rng", {}), "rng", None)
    if found:
        return ("rng_counter", *found)
    found = _first_difference(pa.get("commit", {}), pb.get("commit", {}), "commit", None)
    if found:
        return ("external_commit", *found)
    return None


def first_divergence(a: list[dict], b: list[dict]) -> Divergence | None:
    """The first divergence between traces ``a`` and ``b`` of one kind, or None if identical
    (``TraceKindMismatch`` for traces of different kinds, ``TraceError`` for a malformed one)."""
    a, b = validate_trace(a), validate_trace(b)
    contract_a, contract_b = contract_for(a), contract_for(b)
    if contract_a.kind != contract_b.kind:
        raise TraceKindMismatch(
            f"cannot compare a {contract_a.kind} trace with a {contract_b.kind} trace event by event; "
            "traces of different kinds are compared through their contracts "
            "(labkit.reader.tables.state_table()), not step by step"
        )
    contract = contract_a
    for index, (ea, eb) in enumerate(zip_longest(a, b)):
        if ea is None or eb is None:  # one trace ended: the other has an event it lacks
            present, rule = ea or eb, "event_type_and_parent"
            suspect = contract.suspect(present["event_type"], present["component"], rule, True, "event_type")
            types = [e["event_type"] if e else _MISSING for e in (ea, eb)]
            return Divergence(index, ea, eb, rule, "event_type", *types, suspect, contract.kind)
        found = compare_events(ea, eb, contract)
        if found:
            rule, field, va, vb = found
            ta, tb = (e["payload"].get("tensors", {}) for e in (ea, eb))
            tensors_equal = _tensor_difference(ta, tb, contract.tensor_atol) is None
            suspect = contract.suspect(ea["event_type"], ea["component"], rule, tensors_equal, field, eb["event_type"])
            return Divergence(index, ea, eb, rule, field, va, vb, suspect, contract.kind)
    return None
