"""The fault catalogue of all three traces, behind one interface.

Each trace kind owns its runner and its named faults (``labkit.<kind>.faults.FAULTS``,
each a ``labkit.core.faults.Fault``: a change of the runner's configuration and the first
divergence it must cause).  This module only looks them up, runs a fault and compares it
with the golden trace in ``fixtures/traces/<kind>.jsonl``.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from labkit.core.faults import Fault, lookup

KINDS = {
    # kind: (faults module, runner "module:function", golden trace under fixtures/)
    "text": ("labkit.text.faults", "labkit.text.runtime:run_text_trace", "traces/text.jsonl"),
    "diffusion": ("labkit.diffusion.faults", "labkit.diffusion.pipeline:run_diffusion", "traces/diffusion.jsonl"),
    "tool": ("labkit.tools.faults", "labkit.tools.runtime:run_tool_trace", "traces/tool.jsonl"),
}


def _kind(kind: str) -> tuple[str, str, str]:
    if kind not in KINDS:
        raise ValueError(f"unknown trace kind {kind!r}; expected one of {list(KINDS)}")
    return KINDS[kind]


def faults(kind: str) -> dict[str, Fault]:
    """Name → fault, in declaration order, for one kind."""
    module = importlib.import_module(_kind(kind)[0])
    return dict(module.FAULTS)


def describe(kind: str, name: str) -> str:
    return lookup(faults(kind), kind, name).description


@lru_cache(maxsize=64)
def _run_cached(kind: str, fault: str | None) -> tuple:
    faults_module, runner, _ = _kind(kind)
    config = None if fault is None else importlib.import_module(faults_module).faulty_config(fault)
    module_name, _, function = runner.partition(":")
    run = getattr(importlib.import_module(module_name), function)(config)
    return tuple(run.events)


def run(kind: str, fault: str | None = None) -> list[dict]:
    """The events of one run of ``kind`` with the named fault (None: the correct run)."""
    if fault is not None:
        lookup(faults(kind), kind, fault)
    return [dict(e) for e in _run_cached(kind, fault)]


def golden(kind: str) -> list[dict]:
    """The stored golden trace of ``kind``."""
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    return read_jsonl(fixture_path(*_kind(kind)[2].split("/")))


def diagnose(kind: str, fault: str):
    """The first divergence between the golden trace and a run with ``fault``."""
    from labkit.trace.divergence import first_divergence

    return first_divergence(golden(kind), run(kind, fault))
