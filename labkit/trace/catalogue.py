"""The fault catalogue of every registered trace kind, behind one interface.

Each kind (``labkit.trace.kinds``) holds its runner and its named faults (each a
``labkit.core.faults.Fault``: a change of the runner's configuration and the first
divergence it must cause).  This module only looks them up, runs a fault and compares it
with the kind's golden trace under ``fixtures/``.
"""

from __future__ import annotations

import copy
from functools import lru_cache

from labkit.core.faults import Fault
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
    """The events of one run of ``kind`` with the named fault (None: the correct run); an
    unknown fault is refused before anything runs (``TraceKind.faulty_config``).  Each call returns
    its own copy, so a reader who edits an event (a payload too) never edits the next run."""
    return copy.deepcopy(list(_run_cached(kind, fault)))


def golden(kind: str) -> list[dict]:
    """The stored golden trace of ``kind``: ``fixtures/traces/<kind>.jsonl``."""
    from labkit.core.events import read_golden

    return read_golden(f"{_kind(kind).name}.jsonl")


def diagnose(kind: str, fault: str):
    """The first divergence between the golden trace and a run with ``fault``."""
    from labkit.trace.divergence import first_divergence

    return first_divergence(golden(kind), run_events(kind, fault))
