"""The tool runs the trace-three exercises plug their pieces into (pages 07–10)."""

from __future__ import annotations

from functools import lru_cache

from labkit.check import grading


@lru_cache(maxsize=1)
def decoder():
    from labkit.tools.model import load_decoder

    return load_decoder()


def golden(scenario: str) -> list[dict]:
    return grading.golden("tool.jsonl" if scenario == "happy" else f"tool-{scenario}.jsonl")


def run(scenario: str, hooks, spec=None):
    from labkit.tools.faults import faulty_config
    from labkit.tools.runtime import run_tool_trace

    return run_tool_trace(
        faulty_config(None if scenario == "happy" else scenario), decoder=decoder(), spec=spec, hooks=hooks
    )
