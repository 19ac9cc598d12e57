"""Worked solutions for trace three (pages 07–12): what a student would hand in, the predictions
worked out by hand."""

import unicodedata

import numpy as np

from labkit.tools.calendar_service import IdempotencyConflict
from labkit.tools.confirm import canonical_json, request_digest
from labkit.trace.divergence import first_divergence

# -- page 07 -------------------------------------------------------------------------------------


def integer_field_mask(value_so_far, pieces, schema):
    low, high, step = schema["minimum"], schema["maximum"], schema.get("multipleOf", 1)
    spellings = [str(n) for n in range(low, high + 1) if n % step == 0]  # JSON integers: no sign, no leading 0

    allowed = np.zeros(len(pieces), dtype=bool)
    for token, piece in enumerate(pieces):
        if piece == "}":
            allowed[token] = value_so_far in spellings  # the object closes after a whole number
        elif piece.isdigit():
            allowed[token] = any(s.startswith(value_so_far + piece) for s in spellings)
    return allowed


# the proposal's bytes are the model's own (t01); the first event that records the parsed arguments is t02
extra_field_first_event = "t02"

# -- page 08 -------------------------------------------------------------------------------------

#: pairs that one flaw or another of a canonical form tells apart wrongly
_SUSPECTS = [
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # key order
    ({"x": {"a": 1, "b": 2}}, {"x": {"b": 2, "a": 1}}),  # key order one level down
    ([{"a": 1, "b": 2}], [{"b": 2, "a": 1}]),  # key order inside a list
    ({"n": 1}, {"n": 1.0}),  # one number, two spellings
    ({"n": 100}, {"n": 1e2}),
    ({"a": 1, "b": None}, {"a": 1}),  # a null member is a member
    ({"t": "é"}, {"t": unicodedata.normalize("NFD", "é")}),  # two strings, one look
    ({"t": " x"}, {"t": "x"}),
    ({"t": "A"}, {"t": "a"}),
]


def canonical_witness(canonicalise):
    for a, b in _SUSPECTS:
        if (canonicalise(a) == canonicalise(b)) != (canonical_json(a) == canonical_json(b)):
            return a, b
    return None


# canonical JSON sorts the keys: both orders hash the same bytes
digest_changes_on_reorder = False

# -- page 09 -------------------------------------------------------------------------------------

# the template and the ToolSpec, then the user text up to where the two sentences part
reuse_for_other_request = 76

# -- page 10 -------------------------------------------------------------------------------------


def fingerprinted_execute(service, key, declared_digest, request):
    fingerprint = request_digest(request.normalized_arguments)  # the service's own, never the client's word
    record = service.stored(key)
    if record is None:
        return service.perform(request, fingerprint)
    if record["request_digest"] != fingerprint:
        raise IdempotencyConflict(f"key {key} already belongs to other parameters")
    return record["response"]


# the service committed; the client's record of the outcome (t09) is the first to differ
lost_response_first_event = "t09"


def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2**attempt)  # full jitter over a capped, growing window


# -- page 11 -------------------------------------------------------------------------------------

# the batch order is recorded in the condition event, before any tensor
cfg_swap_divergence = ("d00", "cfg_batch_order")


def _payload_value(event, field):
    """The value at the divergence's field in the mystery's event (a path such as scheduler.eta)."""
    value = event["payload"]
    for part in field.split(" ")[0].split("[")[0].split("."):
        value = value[part]
    return value


def reproduce_the_fault(kind, golden, mystery):
    div = first_divergence(golden, mystery)
    event = div.event_b
    if div.rule == "event_type_and_parent" and event["event_type"] == "authorization.denied":
        held = event["payload"]["reason"].split("holds ")[1]
        return {"capabilities": tuple(c.strip(" '[]") for c in held.split(","))}
    key = div.field.split(" ")[0].split("[")[0]
    value = _payload_value(event, key)
    if key == "scheduler.timesteps":
        return {"num_inference_steps": len(value)}
    if key == "idempotency_key":
        return {"request_id": value.split(":")[0]}
    if key.startswith(("scheduler.", "invocation.")):
        return {key.split(".")[1]: value}
    if kind == "text" and key in ("tie_break", "minimum_output_tokens", "processor_order", "control_ids"):
        return {"sampling": {key: tuple(value) if isinstance(value, list) else value}}
    return {key: value}


# -- page 12 -------------------------------------------------------------------------------------

# eight fixed events, a selection and a delta per token, a decode step between two tokens
three_token_event_count = 8 + 2 * 3 + 2 * (3 - 1)
