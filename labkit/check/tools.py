"""Exercises of trace three (§7.10–7.15): the reader's piece runs inside the real runtime.

Each exercise plugs the reader's function into ``run_tool_trace`` (or ``run_schedule``)
through ``labkit.tools.hooks.ToolHooks`` and compares the run with the golden trace of the
same scenario (``labkit.trace.divergence.first_divergence``) and with the library's own run of
cases the fixtures do not reach.  A failure names the first divergence — the event or the
decision, the rule, the reader's value and the expected one — with a hint about the idea.

* ``integer_field_mask``  — the grammar mask for the ``duration_minutes`` field (page 07);
* ``digest_matches``      — the confirmation's binding to the Invocation digest (page 08);
* ``reusable_prefix``     — how much of the first call's cache the second call reuses (page 09);
* ``idempotent_execute``  — the calendar service's idempotent execute (page 10).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from labkit.check.core import CandidateProblem, CheckResult, as_array, call, exercise

PAGE_PROPOSAL = "notebooks/07-traces/07-tool-proposal.md"
PAGE_COMMIT = "notebooks/07-traces/08-tool-proposal-to-commit.md"
PAGE_SECOND_CALL = "notebooks/07-traces/09-tool-second-call.md"
PAGE_FAILURES = "notebooks/07-traces/10-tool-failures.md"


# -- shared -------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _decoder():
    from labkit.tools.model import load_decoder

    return load_decoder()


def _golden(scenario: str) -> list[dict]:
    from labkit.core.events import read_jsonl
    from labkit.core.fixtures import fixture_path

    name = "tool.jsonl" if scenario == "happy" else f"tool-{scenario}.jsonl"
    return read_jsonl(fixture_path("traces", name))


def _run(scenario: str, hooks, spec=None):
    from labkit.tools.faults import faulty_config
    from labkit.tools.runtime import run_tool_trace

    return run_tool_trace(faulty_config(None if scenario == "happy" else scenario), decoder=_decoder(), spec=spec,
                          hooks=hooks)


def _compare(name: str, case: str, expected: list[dict], got: list[dict], hint_for) -> CheckResult | None:
    """None when the traces agree; otherwise the first divergence as a failed CheckResult."""
    from labkit.trace.divergence import first_divergence

    div = first_divergence(expected, got)
    if div is None:
        return None
    event = div.event_b or div.event_a
    where = f"{event['event_id']} {event['event_type']}, field {div.field} — {case}"
    return CheckResult(name, False, "your run diverges from the reference run", where=where,
                       rule=div.rule, got=div.value_b, expected=div.value_a, hint=hint_for(div))


# -- page 07: the grammar mask for one schema field -------------------------------------------

FIELD = "duration_minutes"
_MARKER = f'"{FIELD}":'


def _field_context():
    """(tokenizer, stop ID, control IDs) of mc_01's decode."""
    from labkit.tools.tokenizer import ToolTokenizer

    tok = ToolTokenizer()
    control = frozenset(i for i in range(tok.vocab_size) if tok.is_control(i))
    return tok, tok.id_of("<|call_end|>"), control


def _example_completion(new: str, low: int, high: int) -> int | None:
    return next((n for n in range(low, high + 1) if str(n).startswith(new)), None)


def _field_hint(value: str, piece: str, got: bool, expected: bool, schema: dict) -> str:
    low, high = int(schema["minimum"]), int(schema["maximum"])
    bounds = f"{low}…{high}"
    digits = piece.rstrip("}")
    closes = piece.endswith("}")
    if not (digits == "" or digits.isdigit()) or piece.count("}") > 1:
        return (f"the piece {piece!r} holds characters that can never appear in this field: only digits "
                "extend the number, and a single `}` may close the object after it")
    new = value + digits
    if closes:
        if expected:
            return (f"{new!r} is already a whole number in {bounds}, so `}}` may close the object here: "
                    "the field is the object's last key, and a complete document is a viable prefix of itself")
        if new == "":
            return "`}` straight after the colon would leave the field without a value"
        return (f"{new!r} is not a whole number in {bounds} (a JSON integer has no leading zero), so the "
                "object may not close yet")
    if got:
        if new.startswith("0"):
            return (f"{new!r} starts with 0: a JSON integer has no leading zeros, and 0 itself is below the "
                    f"minimum {low}, so no number in {bounds} can be spelled from it")
        return (f"no integer in {bounds} is spelled starting with {new!r}: a piece is allowed only if some "
                "continuation still ends in range (too many digits, or already past the maximum)")
    example = _example_completion(new, low, high)
    return (f"{new!r} can still become {example}, which is in {bounds}: a prefix only has to be completable; "
            "it need not be in range yet (read minimum and maximum from the schema you are given)")


class _Diverged(Exception):
    """Stops a run at the reader's first divergent decision (recorded by the hook)."""


def _until_divergence(run):
    try:
        return run()
    except _Diverged:
        return None


class _FieldMask:
    """The reader's field mask inside the real grammar-masked decode; ``mismatches`` records
    each step where it differs from the schema grammar."""

    def __init__(self, candidate, grammar, schema: dict):
        self.candidate, self.grammar, self.schema = candidate, grammar, dict(schema)
        self.tok, self.stop, self.control = _field_context()
        self.step = 0
        self.mismatches: list[tuple] = []

    def reader_mask(self, value: str) -> np.ndarray:
        size = self.tok.vocab_size
        got = call(self.candidate, value, tuple(self.tok.pieces), dict(self.schema))
        return as_array(got, "the returned mask", shape=(size,), dtype_kind="bool")

    def __call__(self, text: str) -> np.ndarray:
        self.step += 1
        reference = self.grammar.mask(text, self.tok.pieces, self.stop, self.control)
        at = text.find(_MARKER)
        if at < 0 or "}" in text[at:]:
            return reference                         # outside the field: the library's grammar
        value = text[at + len(_MARKER):]
        got = self.reader_mask(value)
        differ = np.flatnonzero(got != reference)
        if differ.size:
            self.mismatches.append((self.step, value, int(differ[0]), bool(got[differ[0]]),
                                    bool(reference[differ[0]]), int(differ.size)))
            raise _Diverged                          # the first divergence is all we report
        return got

    def failure(self, name: str, case: str) -> CheckResult | None:
        if not self.mismatches:
            return None
        step, value, token, got, expected, count = self.mismatches[0]
        piece = self.tok.pieces[token]
        return CheckResult(
            name, False, f"your mask differs from the schema grammar at {count} token(s) of this step",
            where=f"{case}: decode step {step}, value so far {value!r}, token {token} {piece!r}",
            rule="allowed[v] ⇔ some continuation of (value + piece) is a valid document",
            got=got, expected=expected, hint=_field_hint(value, piece, got, expected, self.schema))


def _field_schema(spec) -> dict:
    return dict(spec.input_schema["properties"][FIELD])


def _spec_with_bounds(spec, minimum: int, maximum: int):
    import copy
    from dataclasses import replace

    schema = copy.deepcopy(spec.input_schema)
    schema["properties"][FIELD].update(minimum=minimum, maximum=maximum)
    return replace(spec, input_schema=schema)


def _direct_values(schema: dict) -> list[str]:
    """Values the decode does not reach: the empty field, every prefix of the bounds, one past them."""
    low, high = str(schema["minimum"]), str(schema["maximum"])
    values = {"", "9", "99"} | {high[:i] for i in range(1, len(high) + 1)} | {low[:i] for i in range(1, len(low) + 1)}
    return sorted(v for v in values if v == "" or _example_completion(v, int(low), int(high)) is not None)


@exercise(
    "integer_field_mask",
    page=PAGE_PROPOSAL,
    signature=("value_so_far", "pieces", "schema"),
    task="return allowed [V] (bool): which pieces may follow the digits value_so_far of the integer field "
         "described by schema (minimum, maximum), the object's last key — digits that keep the number "
         "completable in range, or `}` once it is a whole number in range; nothing else",
)
def check_integer_field_mask(candidate) -> CheckResult:
    from labkit.tools.calls import first_model_call, grammar_for
    from labkit.tools.grammar import SchemaGrammar
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.runtime import USER_TEXT
    from labkit.tools.toolspec import load_toolspec

    name = "integer_field_mask"
    spec = load_toolspec()
    # 1. the chapter's request: the whole grammar-masked decode, against the golden trace
    reader = _FieldMask(candidate, grammar_for(spec), _field_schema(spec))
    mine = _until_divergence(lambda: _run("happy", ToolHooks(proposal_mask=reader)))
    failed = reader.failure(name, "the chapter's request (1…1440)")
    if failed is None:
        failed = _compare(name, "the chapter's request vs the golden trace", _golden("happy"), mine.events,
                          lambda div: "the proposal changed: compare your allowed set with the table of the 27 steps")
    if failed is not None:
        return failed
    # 2. the same request under a schema that forbids 10 (15…90): the library's decode takes another path
    narrow = _spec_with_bounds(spec, 15, 90)
    grammar = SchemaGrammar.from_schema(narrow.input_schema)
    reader = _FieldMask(candidate, grammar, _field_schema(narrow))
    case = "duration_minutes limited to 15…90"
    mine = _until_divergence(lambda: first_model_call(_decoder(), narrow, USER_TEXT, reader))
    reference = first_model_call(_decoder(), narrow, USER_TEXT)
    if (failed := reader.failure(name, case)) is not None:
        return failed
    if mine.decode.token_ids != reference.decode.token_ids:    # pragma: no cover - masks agreed
        return CheckResult(name, False, "the decode differs although every mask agreed", where=case)
    # 3. values the decodes never reach, for both schemas
    tok, stop, control = _field_context()
    for schema in (_field_schema(spec), _field_schema(narrow)):
        probe = SchemaGrammar.from_schema({"type": "object", "properties": {FIELD: schema},
                                           "required": [FIELD], "additionalProperties": False})
        checker = _FieldMask(candidate, probe, schema)
        for value in _direct_values(schema):
            _until_divergence(lambda value=value, checker=checker: checker("{" + _MARKER + value))
            failed = checker.failure(name, f"duration_minutes in {schema['minimum']}…{schema['maximum']}")
            if failed is not None:
                return failed
    value = "".join(tok.pieces[i] for i in mine.decode.token_ids if i not in control)
    return CheckResult(name, True, "the 27-token proposal matches the golden trace, and under 15…90 your "
                                   f"mask steers the decode to {value.split(_MARKER)[1].rstrip('}')} minutes like the grammar does")


# -- page 08: the confirmation bound to the digest -------------------------------------------

class _Binding:
    def __init__(self, candidate):
        self.candidate = candidate
        self.verdicts: list[bool] = []

    def __call__(self, confirmation, invocation) -> bool:
        verdict = call(self.candidate, confirmation, invocation)
        if type(verdict).__name__ not in ("bool", "bool_"):
            raise CandidateProblem(f"digest_matches must return True or False, got {type(verdict).__name__} "
                                   f"{verdict!r}")
        self.verdicts.append(bool(verdict))
        return bool(verdict)


_BINDING_HINTS = {
    ("happy", False): ("this approval carries exactly SHA-256 of the canonical (RFC 8785) JSON of this "
                       "Invocation, and its decision is 'approve': it authorises the call. Compute the digest "
                       "of the Invocation's whole to_json() with the book's canonical form and compare it "
                       "with confirmation.invocation_digest"),
    ("confirmation_mismatch", True): ("the Invocation presented for execution says 10:00 (inv_02), but the "
                                      "user approved the 09:00 one: any changed argument gives another digest, "
                                      "and an approval binds to its digest, not to the call in general"),
    ("tampered_digest", True): ("the IDs agree (inv_01), but the approved digest differs from this "
                                "Invocation's digest in its last hex digit: compare the whole digest, never "
                                "an ID or the 19 characters shown on the card"),
}


@exercise(
    "digest_matches",
    page=PAGE_COMMIT,
    signature=("confirmation", "invocation"),
    task="return True exactly when the confirmation approves this Invocation: decision 'approve' and "
         "invocation_digest equal to SHA-256 of the RFC 8785 canonical JSON of invocation.to_json()",
)
def check_digest_matches(candidate) -> CheckResult:
    from dataclasses import replace

    from labkit.tools.confirm import Confirmation, invocation_digest
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.schedules import fixture_invocation

    name = "digest_matches"
    for scenario in ("happy", "confirmation_mismatch", "tampered_digest"):
        reader = _Binding(candidate)
        mine = _run(scenario, ToolHooks(digest_matches=reader))
        verdict = reader.verdicts[0] if reader.verdicts else None
        hint = _BINDING_HINTS.get((scenario, verdict), "compare the approved digest with this Invocation's digest")
        failed = _compare(name, f"scenario {scenario} vs its golden trace", _golden(scenario), mine.events,
                          lambda div, hint=hint: hint)
        if failed is not None:
            return failed
    # cases the scenarios do not reach
    invocation = fixture_invocation()
    digest = invocation_digest(invocation)
    reordered = replace(invocation, normalized_arguments=dict(reversed(list(invocation.normalized_arguments.items()))))
    cases = [
        ("the user pressed 'reject' on the right card", Confirmation("confirm_02", "inv_01", digest, "reject"),
         invocation, False, "a confirmation authorises only when its decision is 'approve'"),
        ("the same Invocation with its arguments in another key order", Confirmation("confirm_03", "inv_01", digest,
                                                                                      "approve"),
         reordered, True, "the canonical form sorts keys, so the key order of a dict does not change the digest: "
                          "hash the canonical JSON, not json.dumps of the dict as it comes"),
    ]
    for case, confirmation, presented, expected, hint in cases:
        got = _Binding(candidate)(confirmation, presented)
        if got != expected:
            return CheckResult(name, False, "wrong verdict", where=case, rule="binding to the digest",
                               got=got, expected=expected, hint=hint)
    return CheckResult(name, True, "the happy path, the 10:00 edit and the tampered digest reproduce their golden "
                                   "traces, and a rejected or reordered confirmation is judged right")


# -- page 09: prefix reuse ---------------------------------------------------------------------

OTHER_USER_TEXT = "明天上午九点提醒我带护照。"


class _Reuse:
    def __init__(self, candidate):
        self.candidate = candidate
        self.answers: list[int] = []

    def __call__(self, cached_ids, new_ids) -> int:
        got = call(self.candidate, cached_ids, new_ids)
        if isinstance(got, bool) or not isinstance(got, int | np.integer):
            raise CandidateProblem(f"reusable_prefix must return an int (a number of positions), got "
                                   f"{type(got).__name__} {got!r}")
        limit = min(len(cached_ids), len(new_ids) - 1)
        if not 0 <= int(got) <= limit:
            raise CandidateProblem(f"reusable_prefix returned {int(got)}, but only 0…{limit} positions exist "
                                   f"in both inputs (the cached input has {len(cached_ids)} tokens)")
        self.answers.append(int(got))
        return int(got)


def _reuse_hint(got: int, expected: int, case: str, gap: float | None = None) -> str:
    if got < expected:
        return (f"your function answered {got}, but positions 0…{expected - 1} hold the same tokens in both inputs, so their keys and values are "
                "identical and may all be reused; reuse stops only at the first position whose token differs")
    return (f"position {expected} holds another token in the new input than in the cached one, so the cached "
            f"keys and values from position {expected} on belong to other tokens"
            + (f" — reusing them changes the logits (max |Δ| = {gap:.3g} vs a prefill from scratch)" if gap else "")
            + "; count only the leading positions where the two inputs agree")


@exercise(
    "reusable_prefix",
    page=PAGE_SECOND_CALL,
    signature=("cached_ids", "new_ids"),
    task="return how many leading positions of new_ids [T_b] may reuse the K/V cached for cached_ids [T_a]: "
         "the length of their common prefix",
)
def check_reusable_prefix(candidate) -> CheckResult:
    from labkit.tools.calls import common_prefix, prefill_with_reuse
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.template import ToolTemplate
    from labkit.tools.tokenizer import ToolTokenizer
    from labkit.tools.toolspec import load_toolspec

    name = "reusable_prefix"
    # 1. the chapter's second call, inside the real runtime, against the golden trace
    reader = _Reuse(candidate)
    mine = _run("happy", ToolHooks(reusable_prefix=reader))
    failed = _compare(name, "the chapter's second call vs the golden trace", _golden("happy"), mine.events,
                      lambda div: _reuse_hint(reader.answers[0] if reader.answers else -1, 86, "happy"))
    if failed is not None:
        return failed
    # 2. the cache holds another request's prompt: only the shared beginning may be reused
    decoder, spec, tok = _decoder(), load_toolspec(), ToolTokenizer()
    cached_ids = np.array([tok.encode(ToolTemplate().tool_call_prompt([spec], OTHER_USER_TEXT))])
    new_ids = mine.second_call.input_ids
    _, cache = decoder.prefill(cached_ids)
    reader = _Reuse(candidate)
    reused, prefill, _ = prefill_with_reuse(decoder, cached_ids, cache, new_ids, reader)
    expected = common_prefix(cached_ids, new_ids)
    scratch = decoder.full_logits(new_ids)[0, -1]
    gap = float(np.max(np.abs(np.asarray(prefill.next_logits[0], dtype=np.float64) - scratch)))
    case = f"a cache built for the request {OTHER_USER_TEXT!r} ({cached_ids.shape[1]} tokens)"
    if reused != expected:
        return CheckResult(name, False, "the reused prefix is not the common prefix",
                           where=f"{case}: reused_prefix_tokens", rule="reuse exactly the identical prefix",
                           got=reused, expected=expected, hint=_reuse_hint(reused, expected, case, gap if gap > 1e-4 else None))
    if gap > 1e-4:      # pragma: no cover - the right count always reproduces the logits
        return CheckResult(name, False, "reused logits differ from a prefill from scratch", where=case, got=gap,
                           expected="< 1e-4")
    return CheckResult(name, True, f"the second call reuses 86 and prefills 46 positions as in the golden trace; "
                                   f"a cache of another request is reused for its {expected} shared positions "
                                   "and the logits equal a prefill from scratch")


# -- page 10: the idempotent execute ------------------------------------------------------------

class _Service:
    """The reader's execute as the service's idempotency decision; ``calls`` records each one:
    (key, what the table held, what the reader did, what it should have done)."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.calls: list[dict] = []

    def __call__(self, desk, key, request_digest, request):
        from labkit.tools.calendar_service import IdempotencyConflict

        record = desk.stored(key)
        if record is None:
            expected = "perform the request (the key is new)"
        elif record["request_digest"] == request_digest:
            expected = "return the stored result (same key, same digest: a retry)"
        else:
            expected = "raise IdempotencyConflict (same key, another digest), performing nothing"
        spy = _DeskSpy(desk)
        entry = {"key": key, "stored": record, "expected": expected}
        self.calls.append(entry)
        try:
            response = call(self.candidate, spy, key, request_digest, request)
        except CandidateProblem as problem:
            if "raised IdempotencyConflict" in str(problem):
                entry["did"] = "performed it, then raised IdempotencyConflict" if spy.performed else \
                    "raise IdempotencyConflict (same key, another digest), performing nothing"
                raise IdempotencyConflict(str(problem)) from None
            raise
        if not isinstance(response, dict) or "status" not in response:
            shown = f"a dict with keys {sorted(response)}" if isinstance(response, dict) else repr(response)[:80]
            raise CandidateProblem(f"execute must return a response dict with a 'status' (what perform returns, "
                                   f"or the stored record's 'response'), got {shown}")
        if spy.performed > 1:
            entry["did"] = f"performed the request {spy.performed} times"
        elif spy.performed:
            entry["did"] = "perform the request (the key is new)"
        elif record is not None and response == record["response"] or \
                record is not None and {k: v for k, v in response.items() if k != "replayed"} == record["response"]:
            entry["did"] = "return the stored result (same key, same digest: a retry)"
        else:
            entry["did"] = f"returned {response!r} without performing anything"
        return response

    def first_wrong(self) -> dict | None:
        return next((c for c in self.calls if c.get("did") != c["expected"]), None)


class _DeskSpy:
    def __init__(self, desk):
        self._desk, self.performed = desk, 0

    def stored(self, key):
        return self._desk.stored(key)

    def perform(self, request):
        self.performed += 1
        return self._desk.perform(request)

    def __repr__(self) -> str:
        return "ServiceDesk(stored(key), perform(request))"


_EXECUTE_HINTS = {
    "perform the request (the key is new)":
        "nothing is stored under a new key, so the request has never executed: perform it (perform also "
        "stores the result under the key, so the next retry finds it)",
    "return the stored result (same key, same digest: a retry)":
        "the same key with the same request digest is a retry of a request that already ran (a duplicate "
        "delivery, or a retry after a lost answer): look the key up first and return the stored result — "
        "executing again would create a second event",
    "raise IdempotencyConflict (same key, another digest), performing nothing":
        "the key was used for a *different* request (another digest): neither replay the old result nor "
        "execute the new one — refuse with IdempotencyConflict",
}


def _execute_failure(name: str, case: str, service: _Service, detail: str | None = None) -> CheckResult | None:
    wrong = service.first_wrong()
    if wrong is None:
        return None
    number = service.calls.index(wrong) + 1
    held = "nothing" if wrong["stored"] is None else \
        f"digest {wrong['stored']['request_digest'][:19]}…, status {wrong['stored']['response'].get('status')}"
    return CheckResult(name, False, "the service's idempotency decision is wrong" + (f" ({detail})" if detail else ""),
                       where=f"{case}: request #{number} to the service (key {wrong['key']}, table held {held})",
                       rule="idempotency: new key → perform; same digest → stored result; other digest → conflict",
                       got=wrong.get("did", "?"), expected=wrong["expected"], hint=_execute_hint(wrong))


def _execute_hint(wrong: dict) -> str:
    did = wrong.get("did", "")
    if wrong["expected"].startswith("return the stored") and "IdempotencyConflict" in did:
        return ("the same key with the *same* request digest is the same request arriving again (a duplicate "
                "delivery, or a retry after a lost answer): a conflict is only for another digest; return the "
                "stored result")
    return _EXECUTE_HINTS[wrong["expected"]]


def _schedules():
    """Named fault schedules, then 24 drawn with a fixed seed (as on page 10)."""
    import random

    from labkit.tools.calendar_service import OUTCOMES
    from labkit.tools.executor import CRASH_POINTS, CrashPlan
    from labkit.tools.schedules import CANCELS, FaultSchedule

    named = [
        ("the request delivered twice", FaultSchedule(("duplicate_request",))),
        ("not committed, then delivered twice", FaultSchedule(("not_committed", "duplicate_request"))),
        ("answer lost, then a crash before recording", FaultSchedule(
            ("lose_response",), crashes=(CrashPlan("after_record", 1),))),
        ("a crash after the service committed, then a duplicate", FaultSchedule(
            ("lose_response", "duplicate_request"), crashes=(CrashPlan("after_service_commit", None),))),
    ]
    rng = random.Random(20260719)
    for index in range(24):
        named.append((f"random schedule {index + 1}", FaultSchedule(
            transport_plan=tuple(rng.choice(OUTCOMES) for _ in range(rng.randint(0, 5))),
            crashes=tuple(CrashPlan(rng.choice(CRASH_POINTS), rng.randint(1, 4)) for _ in range(rng.randint(0, 2))),
            cancel=rng.choice(CANCELS), retry_budget=rng.randint(1, 4))))
    return named


def _summary(outcome) -> dict:
    return {"final_state": outcome.final_state, "request_status": outcome.request_status,
            "calendar": sorted(outcome.service.store), "executions": outcome.service.executions}


@exercise(
    "idempotent_execute",
    page=PAGE_FAILURES,
    signature=("service", "key", "request_digest", "request"),
    task="the calendar service's idempotent execute: a new key → service.perform(request); the same key "
         "with the same request_digest → the stored response (service.stored(key)['response']); the same key "
         "with another digest → raise IdempotencyConflict without performing",
)
def check_idempotent_execute(candidate) -> CheckResult:
    from labkit.tools.calendar_service import CalendarService, ServiceTransport
    from labkit.tools.executor import Executor
    from labkit.tools.hooks import ToolHooks
    from labkit.tools.schedules import fixture_invocation, invariant_violations, run_schedule
    from labkit.tools.states import InvocationMachine, State

    name = "idempotent_execute"
    # 1. three scenarios of the chapter, inside the real runtime, against their golden traces
    for scenario in ("happy", "timeout_before_commit", "response_lost_after_commit"):
        service = _Service(candidate)
        mine = _run(scenario, ToolHooks(service_execute=service))
        failed = _execute_failure(name, f"scenario {scenario}", service)
        if failed is None:
            failed = _compare(name, f"scenario {scenario} vs its golden trace", _golden(scenario), mine.events,
                              lambda div: "the service's answer changed the run: an execute returns the response "
                                          "of perform or the stored response, unchanged")
        if failed is not None:
            return failed
    # 2. fault schedules: duplicated deliveries, lost answers, crashes — against the library's outcome
    for case, schedule in _schedules():
        service = _Service(candidate)
        outcome = run_schedule(schedule, service_execute=service)
        problems = invariant_violations(outcome)
        failed = _execute_failure(name, case, service, problems[0] if problems else None)
        if failed is not None:
            return failed
        reference = _summary(run_schedule(schedule))
        if problems or _summary(outcome) != reference:     # pragma: no cover - decisions agreed
            return CheckResult(name, False, "the run broke a promise", where=case, rule="invariants",
                               got=problems or _summary(outcome), expected=reference)
    # 3. the same request key reused for a changed request (10:00): a conflict, nothing executed
    service = _Service(candidate)
    calendar = CalendarService("2026-07-19T14:00:04+08:00", execute=service)
    transport = ServiceTransport(calendar)
    invocation = fixture_invocation()
    later = invocation.with_arguments("inv_02", start="2026-07-20T10:00:00+08:00")
    from labkit.tools.confirm import invocation_digest

    for inv in (invocation, later):
        machine = InvocationMachine(State.PREPARED)
        Executor(transport, "req-42", 1).execute(machine, inv, invocation_digest(inv))
    failed = _execute_failure(name, "request req-42 resent with start 10:00", service)
    if failed is not None:
        return failed
    if sorted(calendar.store) != ["evt_6K2"] or machine.state is not State.FAILED:   # pragma: no cover
        return CheckResult(name, False, "the changed request was not refused", where="req-42 at 10:00",
                           got=sorted(calendar.store), expected=["evt_6K2"])
    return CheckResult(name, True, f"three golden traces and {len(_schedules())} fault schedules keep one event per "
                                   "key with the library's outcome, and a reused key with a changed request "
                                   "is refused as a conflict")
