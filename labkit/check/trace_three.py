"""Trace three's exercises (pages 07–12): the public checks, the canonical forms page 08 shows and the
predictions' answers. Hidden cases and references are the teacher's key, ``answer_key/trace_three.py``.
"""

import json
import re

import numpy as np

from labkit.check import trace_three_runs as runs
from labkit.check import trace_three_service as service
from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import Diverged, compare_traces, passed
from labkit.core.events import read_golden
from labkit.tools.calls import common_prefix
from labkit.tools.confirm import canonical_json, request_digest
from labkit.tools.fixture import fixture_invocation, golden_file
from labkit.tools.tokenizer import ToolTemplate, ToolTokenizer
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue, kinds

# -- page 07: integer_field_mask ------------------------------------------------------------------

#: the schema the public check probes besides the chapter's: a step the kit's grammar does not know
STEPPED = {"type": "integer", "minimum": 15, "maximum": 240, "multipleOf": 15}


@properties()
def integer_field_mask(candidate):
    """The reader's mask for ``duration_minutes`` inside the chapter's decode, then under STEPPED alone."""
    field = dict(load_toolspec().input_schema["properties"][runs.FIELD])
    mask = runs.field_mask(candidate, field, "the chapter's request (1…1440)")
    try:
        events = runs.hooked_tool_run("proposal_mask", mask)
    except Diverged as diverged:
        return diverged.result
    found = compare_traces("the chapter's request vs the golden trace", read_golden(golden_file("happy")), events)
    # a failed CheckResult is falsy: never chain checks with `or`
    return found if found is not None else runs.field_mask_properties(candidate, STEPPED)


# -- page 07: extra_field_first_event is a fault prediction (exercises.toml) ----------------------

# -- page 08: canonical_witness -----------------------------------------------------------------


def unsorted_json(value) -> bytes:
    """Compact JSON, keys in the order the dict was built."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def repr_numbers_json(value) -> bytes:
    """Compact JSON, keys sorted at every depth; numbers as Python writes them."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()


def nulls_dropped_json(value) -> bytes:
    """Keys sorted at every depth, numbers as RFC 8785 writes them, members whose value is null left out."""

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if x is not None}
        return [strip(x) for x in v] if isinstance(v, list) else v

    return canonical_json(strip(value))


#: the canonical forms page 08 shows, by name; RFC 8785 itself is the one without a witness
CANONICAL_FORMS = {
    "unsorted_json": unsorted_json,
    "repr_numbers_json": repr_numbers_json,
    "nulls_dropped_json": nulls_dropped_json,
    "rfc8785": canonical_json,
}


@properties()
def canonical_witness(candidate):
    for name, form in CANONICAL_FORMS.items():
        found = runs.witness_holds(candidate, form, f"canonical form {name}", flawed=form is not canonical_json)
        if found is not None:
            return found
    return None


@value
def digest_changes_on_reorder() -> bool:
    arguments = fixture_invocation().normalized_arguments  # the chapter's Invocation, from the fixtures
    return request_digest(arguments) != request_digest(dict(reversed(list(arguments.items()))))


# -- page 09: reuse_for_other_request ----------------------------------------------------------


@value
def reuse_for_other_request() -> int:
    prompt = ToolTemplate().tool_call_prompt([load_toolspec()], "明天上午九点提醒我带护照。")  # the other request
    second_call = kinds.run_kind("tool", None, decoder=runs.decoder()).second_call  # the chapter's happy path
    return int(common_prefix(np.array([ToolTokenizer().encode(prompt)]), second_call.input_ids))


# -- page 10: fingerprinted_execute, jittered_backoff -------------------------------------------


@properties()
def fingerprinted_execute(candidate):
    """In three scenarios against their golden traces, under fault schedules, then against untrusted clients."""
    try:
        for scenario in ("happy", "timeout_before_commit", "response_lost_after_commit"):
            piece = service.service_piece(candidate)
            events = runs.hooked_tool_run("service_execute", piece, None if scenario == "happy" else scenario)
            golden = read_golden(golden_file(scenario))
            found = compare_traces(f"scenario {scenario} vs its golden trace", golden, events)
            if found is not None:
                return found
        service.service_under_schedules(candidate, (20260719, 8))  # named schedules, then 8 drawn with this seed
        service.service_against_clients(candidate, service.clients)
    except Diverged as diverged:
        return diverged.result
    return None


#: the herd the public check sends: clients, base_ms, cap_ms, slot_ms, attempts, seed
HERD = runs.Herd(clients=20, base_ms=100.0, cap_ms=5000.0, slot_ms=10.0, attempts=8, seed=7)


@properties()
def jittered_backoff(candidate):
    found = runs.backoff_bounds(candidate, HERD)
    return found if found is not None else runs.herd_gets_through(candidate, HERD)


# -- page 11: reproduce_the_fault, cfg_swap_divergence -----------------------------------------


@properties()
def reproduce_the_fault(candidate):
    """Faults of the catalogue as the mysteries (the key adds faults it does not hold)."""
    mysteries = (("text", "tie_break_last_index"), ("diffusion", "eta_positive"), ("tool", "unauthorized"))
    for number, (kind, fault) in enumerate(mysteries):
        found = runs.reproduces(candidate, kind, catalogue.run_events(kind, fault), f"mystery {number} ({kind})")
        if found is not None:
            return found
    return None


@properties()
def cfg_swap_divergence(candidate):
    """Accept the field as the event shows it (its payload key) beside the divergence's path, which the
    engine compares with the answer; anything else goes on to that comparison."""
    div = catalogue.diagnose("diffusion", "cfg_order_swapped")
    if not isinstance(candidate, tuple | list) or len(candidate) != 2 or not all(isinstance(c, str) for c in candidate):
        return None  # the engine names the problem
    event, field = (" ".join(c.split()).casefold() for c in candidate)
    event_id = (div.event_a or div.event_b)["event_id"]
    payload_key = re.split(r"[.\[ ]", div.field, maxsplit=1)[0]  # cfg_batch_order[0] → cfg_batch_order
    if event == event_id and field == payload_key.casefold():
        return passed(say("right — {event_id}, field {field}", event_id=event_id, field=div.field))
    return None


# -- page 12: three_token_event_count --------------------------------------------------------------


@value
def three_token_event_count() -> int:
    text = kinds.kind("text")
    return len(text.run(text.config(max_output_tokens=3)).events)
