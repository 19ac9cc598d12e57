"""The fault catalogue of every registered trace kind (``labkit.trace.kinds``): look a fault up, run it,
and compare it with the kind's golden trace under ``fixtures/``."""

import copy
from functools import lru_cache

from labkit.core.events import read_golden
from labkit.core.faults import Fault
from labkit.trace.divergence import first_divergence
from labkit.trace.kinds import KINDS as KINDS  # re-exported: kind name → TraceKind
from labkit.trace.kinds import kind as _kind
from labkit.trace.kinds import run_kind


def faults(kind: str) -> dict[str, Fault]:
    """Name → fault, in declaration order, for one kind."""
    return dict(_kind(kind).faults)


@lru_cache(maxsize=64)
def _run_cached(kind: str, fault: str | None) -> tuple:
    return tuple(run_kind(kind, fault).events)


def run_events(kind: str, fault: str | None = None) -> list[dict]:
    """The events of one run of ``kind`` with the named fault (None: the correct run); each call returns
    its own copy, so a reader who edits an event (a payload too) never edits the next run."""
    return copy.deepcopy(list(_run_cached(kind, fault)))


def golden(kind: str) -> list[dict]:
    """The stored golden trace of ``kind``: ``fixtures/traces/<kind>.jsonl``."""
    return read_golden(f"{_kind(kind).name}.jsonl")


def diagnose(kind: str, fault: str):
    """The first divergence between the golden trace and a run with ``fault``."""
    return first_divergence(golden(kind), run_events(kind, fault))
