"""The event envelope shared by all three traces (source §7.1: ``ENVELOPE_FIELDS``, exactly seven), a recorder
and JSON Lines I/O.  Event IDs order events within one trace only (``e00``, ``e01``, …).  Wall-clock time is kept
beside the envelope (``TraceRecorder.wall_clock``), never in it: two runs differ in time but not in events.
"""

import copy
import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from labkit.core.guards import of_type
from labkit.core.strictjson import JSONInputError, ecma_pattern, iter_json_lines, loads, schema_validator

ENVELOPE_FIELDS = ("trace_id", "event_id", "parent_event_id", "component", "event_type", "logical_step", "payload")

_PREVIOUS = object()


class TraceError(ValueError):
    """A trace or envelope that breaks the format; the message names the field."""


@lru_cache(maxsize=1)
def _schema() -> dict:
    return loads(resources.files("labkit.core").joinpath("events.schema.json").read_bytes(), "events.schema.json")


def envelope_schema() -> dict:
    """The Draft 2020-12 JSON Schema of one envelope: a copy, so editing it changes no check."""
    return copy.deepcopy(_schema())


@lru_cache(maxsize=1)
def _validator():
    return schema_validator(_schema())


_JSON_TYPES = {"string": str, "integer": int, "null": type(None), "object": dict}


def _with_all_fields(event) -> str:
    """How a message names ``event`` (``event 'e03'``); ``TraceError`` unless it is an object with every field."""
    if not isinstance(event, dict):
        raise TraceError(f"an event must be a JSON object, got {type(event).__name__}")
    at = f"event {event.get('event_id', '?')!r}"
    for name in ENVELOPE_FIELDS:
        if name not in event:
            raise TraceError(f"{at} lacks the field {name!r}")
    return at


def check_envelope_fields(event: dict) -> dict:
    """The envelope schema's rules applied directly, for every ``emit`` (importing jsonschema costs more than a
    whole trace); files get the real validator (``validate_envelope``).  A test holds the two to the same verdicts."""
    at = _with_all_fields(event)
    extra = sorted(set(event) - set(ENVELOPE_FIELDS))
    if extra:
        raise TraceError(f"{at}: Additional properties are not allowed ({extra})")
    for name, spec in _schema()["properties"].items():
        value, kinds = event[name], spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        if not of_type(value, tuple(_JSON_TYPES[k] for k in kinds)):
            raise TraceError(f"{at}: field {name!r}: {value!r} is not of type {' or '.join(kinds)}")
        if isinstance(value, str) and "pattern" in spec and not ecma_pattern(spec["pattern"]).search(value):
            raise TraceError(f"{at}: field {name!r}: {value!r} does not match {spec['pattern']!r}")
        if isinstance(value, str) and len(value) < spec.get("minLength", 0):
            raise TraceError(f"{at}: field {name!r}: {value!r} is too short")
        if isinstance(value, int) and value < spec.get("minimum", value):
            raise TraceError(f"{at}: field {name!r}: {value!r} is less than the minimum of {spec['minimum']}")
    return event


def validate_envelope(event: dict) -> dict:
    """Check one envelope against the schema; raise ``TraceError`` naming the first bad field."""
    at = _with_all_fields(event)
    errors = sorted(_validator().iter_errors(event), key=lambda e: list(e.path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.path) or "(envelope)"
        raise TraceError(f"{at}: field {where!r}: {error.message}")
    return event


def validate_trace(events: Iterable[dict]) -> list[dict]:
    """Validate a whole trace: envelopes, one trace_id, unique IDs, parents earlier in it."""
    events = list(events)
    if not events:
        raise TraceError("a trace needs at least one event")
    seen: set[str] = set()
    for index, event in enumerate(events):
        validate_envelope(event)  # the first event is checked before its trace_id is read
        trace_id = events[0]["trace_id"]
        if event["trace_id"] != trace_id:
            raise TraceError(
                f"field 'trace_id': event {event['event_id']!r} belongs to {event['trace_id']!r}, "
                f"but this trace is {trace_id!r}"
            )
        if event["event_id"] in seen:
            raise TraceError(f"field 'event_id': {event['event_id']!r} appears twice")
        parent = event["parent_event_id"]
        if parent is not None and parent not in seen:
            raise TraceError(
                f"field 'parent_event_id': event {event['event_id']!r} names parent {parent!r}, "
                "which is not an earlier event of this trace"
            )
        if index and parent is None:
            raise TraceError(
                f"field 'parent_event_id': only the first event may have no parent, but {event['event_id']!r} has none"
            )
        seen.add(event["event_id"])
    return events


@dataclass
class TraceRecorder:
    """Assigns ordered event IDs within one trace and keeps wall-clock time apart.

    >>> rec = TraceRecorder("trace-text-001", prefix="e")
    >>> rec.emit("gateway", "request.accepted", None, {"request_id": "r1"})["event_id"]
    'e00'
    """

    trace_id: str
    prefix: str = "e"
    events: list[dict] = field(default_factory=list)
    wall_clock: dict[str, float] = field(default_factory=dict)
    clock: Any = time.time

    def __post_init__(self):
        if not isinstance(self.trace_id, str) or not self.trace_id:
            raise TraceError(f"field 'trace_id' must be a non-empty string, got {self.trace_id!r}")
        if not (isinstance(self.prefix, str) and len(self.prefix) == 1 and self.prefix.islower()):
            raise TraceError(f"prefix must be one lower-case letter, got {self.prefix!r}")

    def next_event_id(self) -> str:
        return f"{self.prefix}{len(self.events):02d}"

    def emit(
        self,
        component: str,
        event_type: str,
        logical_step: int | None = None,
        payload: dict | None = None,
        *,
        parent: str | None | object = _PREVIOUS,
    ) -> dict:
        """Append one event; its parent defaults to the previous event of this trace."""
        previous = self.events[-1]["event_id"] if self.events else None
        parent_id = previous if parent is _PREVIOUS else parent
        known = {e["event_id"] for e in self.events}
        if parent_id is not None and parent_id not in known:
            raise TraceError(f"field 'parent_event_id': {parent_id!r} is not an earlier event of {self.trace_id!r}")
        event = {
            "trace_id": self.trace_id,
            "event_id": self.next_event_id(),
            "parent_event_id": parent_id,
            "component": component,
            "event_type": event_type,
            "logical_step": logical_step,
            "payload": to_jsonable(payload or {}),
        }
        check_envelope_fields(event)
        self.events.append(event)
        self.wall_clock[event["event_id"]] = self.clock()
        return event

    def write_jsonl(self, path: str | Path) -> Path:
        return write_jsonl(self.events, path)


def to_jsonable(value: Any) -> Any:
    """Turn NumPy scalars/arrays and tuples into plain JSON values (no silent str())."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):  # a NumPy scalar's tolist() is its item()
        return value.tolist()
    if isinstance(value, bytes):
        raise TraceError("payload values must be JSON; encode bytes explicitly (e.g. as hex)")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TraceError(f"payload value of type {type(value).__name__} is not JSON")


def dumps_event(event: dict) -> str:
    """One JSONL line: keys in envelope order, Chinese text kept as UTF-8."""
    ordered = {name: event[name] for name in ENVELOPE_FIELDS}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def write_jsonl(events: Iterable[dict], path: str | Path) -> Path:
    """Validate and write a trace as JSON Lines (UTF-8, one envelope per line)."""
    events = validate_trace(events)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dumps_event(e) + "\n" for e in events), encoding="utf-8")
    return path


def read_jsonl(path: str | Path) -> list[dict]:
    """Read and validate a JSON Lines trace; an error names the file."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"trace file {str(path)!r} does not exist")
    try:
        events = [value for _, value in iter_json_lines(path)]
    except JSONInputError as exc:
        raise TraceError(str(exc)) from None
    try:
        return validate_trace(events)
    except TraceError as exc:
        raise TraceError(f"{path.name}: {exc}") from None


def read_golden(filename: str) -> list[dict]:
    """The golden trace ``fixtures/traces/<filename>``, read and validated once while the file is unchanged; each
    call parses its own copy (the checkers and pages read it again and again)."""
    from labkit.core.fixtures import fixture_path

    path = fixture_path("traces", filename)
    stat = path.stat()
    return [loads(line, filename) for line in _validated_lines(str(path), stat.st_mtime_ns, stat.st_size)]


@lru_cache(maxsize=64)
def _validated_lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """The file read once, by the strict reader with the envelope checks, kept as one line per event."""
    return tuple(dumps_event(event) for event in read_jsonl(path))


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tensor_summary(array, position: Any = None, *, digest: bool = False, stats: bool = False) -> dict:
    """What a tensor event carries: shape, dtype, logical position; ``digest``: the raw little-endian bytes'
    hash (integer tensors, exact data); ``stats``: min/max/mean to 4 decimals (floats, compared under a tolerance)."""
    import numpy as np

    arr = np.asarray(array)
    summary: dict[str, Any] = {"shape": list(arr.shape), "dtype": str(arr.dtype), "position": to_jsonable(position)}
    if digest:
        summary["digest"] = digest_bytes(np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes())
    if stats:
        if arr.size == 0:
            raise TraceError("cannot summarise an empty tensor")
        values = arr.astype(np.float64)
        # ``+ 0.0`` turns a rounded -0.0 into 0.0: a mean of -1e-9 on one BLAS kernel and
        # +1e-9 on another must give the same golden trace.
        summary["summary"] = {name: round(float(getattr(values, name)()), 4) + 0.0 for name in ("min", "max", "mean")}
    return summary


def top_values(row, k: int) -> list[list]:
    """``[[id, value], …]``: the k largest finite entries of a row [V], ties by lower ID, values
    rounded to 4 decimals — what a logits event carries beside its summary."""
    import numpy as np

    row = np.asarray(row)
    finite = np.flatnonzero(np.isfinite(row))
    order = finite[np.argsort(-row[finite], kind="stable")][:k]
    return [[int(i), round(float(row[i]), 4)] for i in order]
