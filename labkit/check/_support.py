"""What the checkers share beyond ``core``: golden traces, a run compared with the reference
run, closeness of arrays, and the small argument guards of the numeric labs.

A checker module holds its question (the cases it runs) and its hints; everything here is
plumbing, written once.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from labkit.check.core import CandidateProblem, CheckResult, failure, first_bad_index

#: tolerance of the numeric labs' exact comparisons
ATOL = 1e-12


def golden(filename: str, first: int | None = None) -> list[dict]:
    """The golden trace ``fixtures/traces/<filename>`` (its first ``first`` events)."""
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    return read_jsonl(fixture_path("traces", filename))[:first]


def event_where(event: dict, field: str, case: str) -> str:
    """``d03 denoise.updated (step 2), field tensors.x — case`` (no step for stepless events)."""
    step = event.get("logical_step")
    at = f" (step {step})" if step is not None else ""
    return f"{event['event_id']} {event['event_type']}{at}, field {field} — {case}"


def compare_traces(case: str, expected: list[dict], got: list[dict], hint_for) -> CheckResult | None:
    """None when the traces agree; otherwise their first divergence as a failed CheckResult.

    ``hint_for(divergence)`` turns the divergent event and field into a hint."""
    from labkit.trace.divergence import first_divergence

    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    return failure("your run diverges from the reference run", where=event_where(event, div.field, case),
                   rule=div.rule, got=div.value_b, expected=div.value_a, hint=hint_for(div))


def first_far(got, expected, atol: float) -> tuple[int, ...] | None:
    """Index (C order) of the first element of ``got`` farther than ``atol`` from ``expected``,
    both compared in float64."""
    return first_bad_index(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64), atol)


def close(got, other, atol: float = ATOL) -> bool:
    """Same shape, ``other`` finite, every element within ``atol`` (recognises a typical mistake)."""
    got, other = np.asarray(got, dtype=np.float64), np.asarray(other, dtype=np.float64)
    return got.shape == other.shape and bool(np.all(np.isfinite(other))) and \
        bool(np.allclose(got, other, rtol=0.0, atol=atol))


@contextmanager
def in_case(case: str):
    """A problem with the candidate (crash, wrong type or shape) names the case it happened on."""
    try:
        yield
    except CandidateProblem as problem:
        if "not yet implemented" in str(problem):
            raise
        raise CandidateProblem(f"on case “{case}”: {problem}") from None


def number(value, name: str) -> float:
    """A single real number (NaN and ±inf allowed here: the caller judges them)."""
    if isinstance(value, bool):
        raise CandidateProblem(f"{name} must be a number, got a bool ({value})")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CandidateProblem(f"{name} must be a number, got {type(value).__name__}") from None
    if array.size != 1:
        raise CandidateProblem(f"{name} must be one number, got an array of shape {list(array.shape)}")
    return float(array.reshape(()))


def fmt(values) -> str:
    """``[0.1235, 2]``: a short list for messages."""
    return "[" + ", ".join(f"{v:.4g}" for v in np.asarray(values, dtype=np.float64).ravel()) + "]"


# -- trace two: the diffusion runs the exercises plug into ------------------------------------

#: the diffusion exercises compare the latent-level part of the trace, d00–d05 (condition,
#: initial latent, four denoise steps), under the trace's tolerance.  Pixels and PNG bytes
#: (d06–d08) are compared exactly, and a correct answer that rounds its last float bit
#: differently would change them without being wrong.
LATENT_EVENTS = 6


def diffusion_golden() -> list[dict]:
    return golden("diffusion.jsonl", LATENT_EVENTS)


@lru_cache(maxsize=4)
def diffusion_reference(config=None):
    """The library's run of ``config`` (default §7.6) up to z₀, computed once per configuration."""
    from labkit.diffusion.pipeline import run_diffusion

    return run_diffusion(config, decode=False)


def diffusion_run(config=None, **hooks):
    """The run with the reader's pieces as ``DiffusionHooks`` (a wrong answer is judged, not warned about)."""
    from labkit.diffusion.hooks import DiffusionHooks
    from labkit.diffusion.pipeline import run_diffusion

    with np.errstate(all="ignore"):
        return run_diffusion(config, keep_previews=True, hooks=DiffusionHooks(**hooks), decode=False)


def dtype_hint(what: str) -> str:
    return (f"the latent stays float32 all the way: {what} must keep the dtype of the arrays you were given "
            "(compute in float64 if you like, then cast back with .astype(...))")


# -- trace three: the tool runs ----------------------------------------------------------------

@lru_cache(maxsize=1)
def tool_decoder():
    from labkit.tools.model import load_decoder

    return load_decoder()


def tool_golden(scenario: str) -> list[dict]:
    return golden("tool.jsonl" if scenario == "happy" else f"tool-{scenario}.jsonl")


def tool_run(scenario: str, hooks, spec=None):
    from labkit.tools.runtime import ToolRunConfig, run_tool_trace

    return run_tool_trace(ToolRunConfig.named(scenario), decoder=tool_decoder(), spec=spec, hooks=hooks)
