"""The exercises of the preface and chapter 7 without a runtime hook; every answer is computed from the
real kernels, fixtures and runtimes at check time, so a change to the kit moves the answer with it.
"""

from __future__ import annotations

import numpy as np

from labkit.check import tools
from labkit.check.core import function, table, value
from labkit.check.grading import exactly
from labkit.nn import rms_norm
from labkit.tools.calls import common_prefix
from labkit.tools.confirm import request_digest
from labkit.tools.fixture import fixture_invocation
from labkit.tools.tokenizer import ToolTemplate, ToolTokenizer
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue, kinds

#: the request the cache of page 09's prediction was built for
OTHER_USER_TEXT = "明天上午九点提醒我带护照。"


@value
def rms_norm_row() -> float:
    return float(rms_norm(np.array([[3.0, 4.0, 0.0, 0.0]]), 1e-6)[0, 0])


def _min_p_cases():
    rng = np.random.default_rng(29)
    return [
        ("seeded logits [16], min_p = 0.1", (rng.normal(size=16) * 3, 0.1)),
        ("logits in the thousands, min_p = 0.5", (np.array([1000.0, 999.5, 990.0, 1000.0]), 0.5)),
        ("min_p = 1: only the maxima stay", (np.array([2.0, 1.0, 2.0, -1.0]), 1.0)),
        ("a row with −∞ already masked", (np.array([0.0, -np.inf, -0.5, -3.0]), 0.2)),
    ]


@function(_min_p_cases)
def min_p_filter(logits, min_p):
    z = np.asarray(logits, dtype=np.float64)
    keep = z - np.max(z) >= np.log(min_p)  # p_i / p_max = exp(z_i − z_max)
    return np.where(keep, z, -np.inf)


@value
def three_token_event_count() -> int:
    text = kinds.kind("text")
    return len(text.run(text.config(max_output_tokens=3)).events)


@value
def digest_changes_on_reorder() -> bool:
    arguments = fixture_invocation().normalized_arguments  # the chapter's Invocation, from the fixtures
    return request_digest(arguments) != request_digest(dict(reversed(list(arguments.items()))))


@value
def reuse_for_other_request() -> int:
    prompt = ToolTemplate().tool_call_prompt([load_toolspec()], OTHER_USER_TEXT)
    second_call = kinds.run("tool", None, decoder=tools.decoder()).second_call  # the chapter's happy path
    return int(common_prefix(np.array([ToolTokenizer().encode(prompt)]), second_call.input_ids))


def _backoff_cases():
    return [
        ("first retry", (0, 100.0, 5000.0, 0.5)),
        ("third retry", (2, 100.0, 5000.0, 0.25)),
        ("past the cap", (10, 100.0, 5000.0, 0.9)),
        ("u = 0: retry at once", (4, 50.0, 1000.0, 0.0)),
        ("exactly at the cap", (5, 100.0, 3200.0, 0.999)),
    ]


@function(_backoff_cases)
def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2.0**attempt)  # full jitter on the capped exponential


def _chain(*pairs: tuple[str, str | None]) -> list[dict]:
    """A trace of events (ID, parent ID) with every other field fixed."""
    fields = {"trace_id": "trace-x", "component": "c", "event_type": "a.b", "logical_step": None, "payload": {}}
    return [{**fields, "event_id": e, "parent_event_id": p} for e, p in pairs]


def _chains():
    return [
        ("a well-formed chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e01")),)),
        ("a parent that points forward", (_chain(("e00", None), ("e01", "e02"), ("e02", "e00")),)),
        ("a parent that does not exist", (_chain(("e00", None), ("e01", "e00"), ("e02", "e09")),)),
        ("a second root", (_chain(("e00", None), ("e01", None), ("e02", "e01")),)),
        ("a tree, not a chain", (_chain(("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01")),)),
    ]


@function(_chains, agree=exactly)
def bad_parents(events):
    seen: set[str] = set()
    bad = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if (parent is None and index > 0) or (parent is not None and parent not in seen):
            bad.append(event["event_id"])
        seen.add(event["event_id"])
    return bad


#: the mysteries handed to the reader's function, in order: (kind, fault)
MYSTERIES = (
    ("text", "broken_detokenizer"),
    ("diffusion", "leading_timesteps"),
    ("tool", "unauthorized"),
    ("text", "reset_rope_position"),
)


@table(agree=exactly)
def name_the_fault():
    return [
        (f"mystery {number} ({kind})", (kind, catalogue.golden(kind), catalogue.run(kind, fault)), fault)
        for number, (kind, fault) in enumerate(MYSTERIES)
    ]
