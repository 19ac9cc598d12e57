"""The properties behind trace three's public checks (``labkit.check.trace_three``), also run by the key on
its hidden cases: a field mask inside the real decode and against the definition of a viable prefix, a
canonical form's witness, a retry policy in a herd of clients, a config change against a mystery trace.
"""

import collections
import copy
import functools
import heapq
import itertools
import math
import random
from dataclasses import dataclass

import numpy as np

from labkit.check.core import hooked
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, Diverged, as_array, call, failure, unpack
from labkit.tools.calls import grammar_for, proposal_mask
from labkit.tools.confirm import canonical_json
from labkit.tools.model import load_decoder
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue, kinds
from labkit.trace.divergence import first_divergence

FIELD = "duration_minutes"
_MARKER = f'"{FIELD}":'
VIABLE = "allowed[v] ⇔ some number the schema accepts starts with value_so_far + piece (or, for `}`, is value_so_far)"


@functools.lru_cache(maxsize=1)
def decoder():
    return load_decoder()


def hooked_tool_run(hook: str, piece, fault: str | None = None) -> list[dict]:
    """The events of trace three (scenario ``fault``) with ``piece`` as its hook ``hook``."""
    return hooked("tool", hook, fault, decoder=decoder())(piece)


# -- a field mask ----------------------------------------------------------------------------------


def _mask(candidate, value: str, schema: dict) -> np.ndarray:
    pieces = tuple(ToolTokenizer().pieces)
    got = call(candidate, value, pieces, dict(schema))
    return as_array(got, say("the returned mask"), shape=(len(pieces),), dtype_kind="bool")


def field_mask(candidate, schema: dict, case: str):
    """The reader's field mask in place of the schema grammar's inside the real grammar-masked decode:
    at each step inside the field it must allow what the grammar allows; the first difference stops the run."""
    grammar, steps = proposal_mask(grammar_for(load_toolspec())), itertools.count(1)

    def mask(text: str) -> np.ndarray:
        step, reference = next(steps), grammar(text)
        at = text.find(_MARKER)
        if at < 0 or "}" in text[at:]:
            return reference  # outside the field: the library's grammar
        value = text[at + len(_MARKER) :]
        got = _mask(candidate, value, schema)
        differ = np.flatnonzero(got != reference)
        if differ.size:
            token = int(differ[0])
            piece = ToolTokenizer().pieces[token]
            fields = {"case": case, "step": step, "value": value, "token": token, "piece": piece}
            message = say("your mask differs from the schema grammar at {size} token(s) of this step", size=differ.size)
            where = say("{case}: decode step {step}, value so far {value!r}, token {token} {piece!r}", **fields)
            raise Diverged(failure(message, where=where, rule=say(VIABLE), got=bool(got[token])))
        return got

    return mask


def _accepted(value: str, schema: dict) -> bool:
    """A whole JSON integer (no sign, no leading zero) that the schema accepts."""
    if not value.isdigit() or (value[0] == "0" and value != "0"):
        return False
    number = int(value)
    return schema["minimum"] <= number <= schema["maximum"] and number % schema.get("multipleOf", 1) == 0


def _mask_problem(what: str, case: str, value: str, token: int, allowed: bool):
    fields = {"case": case, "value": value, "token": token, "piece": ToolTokenizer().pieces[token]}
    where = say("{case}: value so far {value!r}, token {token} {piece!r}", **fields)
    return failure(what, where=where, rule=say(VIABLE), got=allowed)


class _ReadersMask:
    """The reader's mask under one schema: ``allowed(value)`` and ``can_close(value)``, each asked once per value."""

    def __init__(self, candidate, schema: dict):
        self.schema, self.pieces = schema, ToolTokenizer().pieces
        self.allowed = functools.cache(functools.partial(_mask, candidate, schema=schema))
        self.can_close = functools.cache(self._can_close)

    def _can_close(self, value: str) -> bool:
        """Some path the mask allows from ``value`` ends at an allowed `}` (none goes on for ever)."""
        if len(value) > len(str(self.schema["maximum"])):
            return False
        allowed = self.allowed(value)
        digits = [self.pieces[t] for t in np.flatnonzero(allowed) if self.pieces[t].isdigit()]
        return bool(allowed[self.pieces.index("}")]) or any(self.can_close(value + d) for d in digits)


def _unsound(mask: _ReadersMask, case: str):
    """Every value the reader's mask lets a decode reach: a `}` only after an accepted number, only
    digits otherwise, and never a digit after which no allowed path closes."""
    queue, seen = collections.deque([""]), {""}
    while queue:  # the shortest values first: the report names the first place a decode reaches
        value = queue.popleft()
        for token in np.flatnonzero(mask.allowed(value)):
            piece = mask.pieces[token]
            if piece == "}" and not _accepted(value, mask.schema):
                what = say("your mask closes a number the schema does not accept")
                return _mask_problem(what, case, value, token, allowed=True)
            if piece != "}" and not piece.isdigit():
                what = say("your mask allows a piece that is neither digits nor `}`")
                return _mask_problem(what, case, value, token, allowed=True)
            if piece.isdigit() and not mask.can_close(value + piece):
                what = say("your mask allows a piece after which no accepted number ends")
                return _mask_problem(what, case, value, token, allowed=True)
            if piece.isdigit() and value + piece not in seen:
                seen.add(value + piece)
                queue.append(value + piece)
    return None


def _incomplete(mask: _ReadersMask, case: str):
    """Every accepted number can be written along the mask, by any of its pieces, and closed."""
    low, high, step = mask.schema["minimum"], mask.schema["maximum"], mask.schema.get("multipleOf", 1)
    for number in (str(n) for n in range(low, high + 1) if n % step == 0):
        for at in range(len(number) + 1):
            written, rest = number[:at], number[at:] or "}"
            for token, piece in enumerate(mask.pieces):
                if (piece.isdigit() or piece == "}") and rest.startswith(piece) and not mask.allowed(written)[token]:
                    what = say("your mask forbids a piece on the way to an accepted number")
                    return _mask_problem(what, case, written, token, allowed=False)
    return None


def field_mask_properties(candidate, schema: dict):
    """Two properties of the reader's own mask under ``schema``: sound (every path it allows ends at a
    `}` after a number the schema accepts) and complete (every accepted number can be written along it)."""
    case = f"duration_minutes in {schema['minimum']}…{schema['maximum']}"
    case += say(" in steps of {step}", step=schema["multipleOf"]) if "multipleOf" in schema else ""
    mask = _ReadersMask(candidate, schema)
    found = _unsound(mask, case)
    return found if found is not None else _incomplete(mask, case)


# -- a canonical form's witness --------------------------------------------------------------------


def witness_holds(candidate, form, case: str, *, flawed: bool):
    """The reader's ``(a, b)`` for canonical form ``form``: ``form`` and RFC 8785 disagree on whether
    a and b are the same document; None for a form that has no such pair."""
    got = call(candidate, form)
    if got is None and flawed:
        return failure(say("this canonical form has a witness: you returned None"), where=case, rule=say(_SAME))
    if got is None:
        return None
    a, b = unpack(got, ("a", "b"))
    try:
        same_meaning = canonical_json(a) == canonical_json(b)
        same_bytes = form(copy.deepcopy(a)) == form(copy.deepcopy(b))
    except Exception as exc:  # noqa: BLE001 - the reader's values are not JSON documents
        text = "at {case}: a and b must be JSON values ({kind}: {exc})"
        raise CandidateProblem(say(text, case=case, kind=type(exc).__name__, exc=exc)) from None
    if same_meaning == same_bytes:
        agree = say("the same document") if same_meaning else say("two documents")
        message = say("RFC 8785 and this form agree: both see {agree}", agree=agree)
        message += "" if flawed else say(" (it is RFC 8785 itself)")
        return failure(message, where=case, rule=say(_SAME), got=(a, b))
    return None


_SAME = "a witness: the form spells one document two ways, or two documents one way (RFC 8785 decides which)"


# -- a retry policy in a herd ----------------------------------------------------------------------


@dataclass(frozen=True)
class Herd:
    """``clients`` fail together at t = 0 against a service that serves one request per ``slot_ms``
    slot (two in one slot both fail); each retries after the reader's delay, at most ``attempts`` times."""

    clients: int
    base_ms: float
    cap_ms: float
    slot_ms: float
    attempts: int
    seed: int

    def __str__(self) -> str:
        text = (
            "{clients} clients, base_ms {base:g}, cap_ms {cap:g}, one request per {slot:g} ms, {attempts} retries each"
        )
        fields = {"base": self.base_ms, "cap": self.cap_ms, "slot": self.slot_ms}
        return say(text, clients=self.clients, attempts=self.attempts, **fields)


def _delay(candidate, attempt: int, herd: Herd, u: float) -> float:
    got = call(candidate, attempt, herd.base_ms, herd.cap_ms, u)
    if isinstance(got, bool | np.bool_) or not isinstance(got, int | float | np.integer | np.floating):
        text = "your delay must be a number of ms, got {kind} {got!r:.40}"
        raise CandidateProblem(say(text, kind=type(got).__name__, got=got))
    return float(got)


def backoff_bounds(candidate, herd: Herd):
    """Every delay is a finite number in [0, cap_ms]; the first retry waits at most base_ms."""
    for attempt in range(12):
        for u in (0.0, 0.25, 0.5, 0.75, 0.999):
            delay = _delay(candidate, attempt, herd, u)
            ceiling = herd.base_ms if attempt == 0 else herd.cap_ms
            if not (math.isfinite(delay) and 0.0 <= delay <= ceiling):
                name = "base_ms (the first retry)" if attempt == 0 else "cap_ms"
                fields = {"attempt": attempt, "u": u, "base_ms": herd.base_ms, "cap_ms": herd.cap_ms}
                where = say("retry {attempt}, u = {u}, base_ms {base_ms:g}, cap_ms {cap_ms:g}", **fields)
                rule = say("0 ≤ delay ≤ cap_ms always, and ≤ base_ms for retry 0")
                return failure(say("a delay outside [0, {name}]", name=name), where=where, rule=rule, got=delay)
    return None


def herd_gets_through(candidate, herd: Herd):
    """Every client of the herd gets a request through within its retries."""
    rng = random.Random(herd.seed)
    sends = [(0.0, client, 0) for client in range(herd.clients)]  # (time, client, retries so far)
    delays: dict[int, list[float]] = {c: [] for c in range(herd.clients)}
    while sends:
        heapq.heapify(sends)
        slot = math.floor(sends[0][0] / herd.slot_ms)
        arriving = [heapq.heappop(sends) for _ in range(len(sends)) if math.floor(sends[0][0] / herd.slot_ms) == slot]
        if len(arriving) == 1:
            continue  # served
        for t, client, retries in arriving:
            if retries == herd.attempts:
                fields = {"client": client, "attempts": herd.attempts}
                message = say("client {client} collided on every one of its {attempts} retries", **fields)
                where = say("a herd of {herd}: client {client}, at {t:.0f} ms", herd=herd, client=client, t=t)
                rule = say("clients that fail together must not retry together, and the spread must grow")
                return failure(message, where=where, rule=rule, got=[round(d, 1) for d in delays[client]])
            delay = _delay(candidate, retries, herd, rng.random())
            delays[client].append(delay)
            sends.append((t + max(delay, 0.0), client, retries + 1))
    return None


# -- a config change against a mystery -------------------------------------------------------------


_RUNS: dict[tuple[str, str], list[dict]] = {}


def _run_with(kind: str, change: dict) -> list[dict]:
    """The events of ``kind``'s fixture config changed by ``change`` (a run is a function of its config:
    the same change, spelled the same, is run once)."""
    key = (kind, repr(change))
    if key not in _RUNS:
        found = kinds.kind(kind)
        config = found.config().replace(**copy.deepcopy(change))
        if hasattr(config, "journal_path"):  # a change never makes the checker write a file
            config = config.replace(journal_path=":memory:")
        resources = {"decoder": decoder()} if kind == "tool" else {}
        _RUNS[key] = found.run(config, None, **resources).events
        while len(_RUNS) > 64:
            _RUNS.pop(next(iter(_RUNS)))
    return _RUNS[key]


def reproduces(candidate, kind: str, mystery: list[dict], case: str):
    """The reader's config change, applied to ``kind``'s fixture config, gives the mystery trace."""
    golden = catalogue.golden(kind)
    change = call(candidate, kind, golden, copy.deepcopy(mystery))
    if not isinstance(change, dict) or not change:
        text = "at {case}: return the config change as a dict {{field: value}}, got {change!r:.60}"
        raise CandidateProblem(say(text, case=case, change=change))
    try:
        events = _run_with(kind, change)
    except Exception as exc:  # noqa: BLE001 - a change the runtime refuses is the reader's to fix
        text = "at {case}: the run with your change {change!r:.80} failed: {exc}"
        raise CandidateProblem(say(text, case=case, change=change, exc=exc)) from None
    div = first_divergence(mystery, events)
    if div is None:
        return None
    event = div.event_a or div.event_b
    fields = {"case": case, "event": event["event_id"], "event2": event["event_type"], "field": div.field}
    where = say("{case}: {event} {event2}, field {field}", **fields)
    return failure(say("the run with your change is not the mystery trace"), where=where, rule=div.rule, got=change)
