"""Trace three, run: two model calls around a confirmed, idempotent calendar write (t00–t14).

``run_tool_trace(ToolRunConfig())`` computes everything on the spot: the 86-token prompt,
the prefill of toy-tool-decoder-v1, the grammar-masked greedy decode of the 27 proposal
tokens, parse → validate → normalise → authorise → confirm → execute → observe on the
state machine, the calendar service's commit, and the second call that reuses the first
call's prefix cache before it writes the summary.  Every step is one event of the trace.

From t04 on, every state transition of the Invocation is written to a SQLite journal
before the step it authorises; execution is ``labkit.tools.executor``, and a crash (a
``CrashPlan`` in the config) is followed by a restart that resolves the Invocation from
the journal (``labkit.tools.recovery``), querying the service instead of re-executing.

A scenario is a change of the frozen ``ToolRunConfig`` (``labkit.tools.faults``):
the proposal tampered past the grammar, an edit after approval, a tampered digest, a
transport plan with timeouts and lost responses, a cancel after the commit, missing
capabilities, a crash at a crash point, or a broken retry policy that mints a new key per
attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from labkit.core.events import TraceRecorder, tensor_summary
from labkit.core.runtime import Config
from labkit.tools.answer import ANSWER_STRATEGY, AnswerSlots
from labkit.tools.authorize import Principal, authorize
from labkit.tools.calendar_service import CalendarService, ServiceTransport
from labkit.tools.confirm import (
    Confirmation,
    ConfirmationError,
    check_confirmation,
    confirmation_card,
    invocation_digest,
)
from labkit.tools.decode import DecodeResult, greedy_decode
from labkit.tools.executor import Crash, CrashPlan, Executor
from labkit.tools.grammar import SchemaGrammar
from labkit.tools.hooks import ToolHooks
from labkit.tools.journal import Journal
from labkit.tools.model import CONFIG
from labkit.tools.normalize import Invocation, normalize
from labkit.tools.recovery import recover_invocation
from labkit.tools.states import InvocationMachine, State
from labkit.tools.template import TEMPLATE_ID, ToolTemplate, compact_json
from labkit.tools.tokenizer import TOKENIZER_ID, ToolTokenizer
from labkit.tools.toolspec import ToolSpec, find_tool
from labkit.tools.validate import ProposalError, parse_arguments, validate_arguments

USER_TEXT = "明天上午九点提醒我带护照，提交前让我确认。"
STRATEGY = "greedy_with_json_grammar"          # §7.10; what runs in mc_01 (mc_02: ANSWER_STRATEGY)
CANCELLED_AFTER_COMMIT = "cancelled-after-commit"   # §7.13's request status
MAX_PROPOSAL_TOKENS = 64
MAX_ANSWER_TOKENS = 48
RECOVERY_GUIDANCE = ("the event exists; query it by event ID or idempotency key, "
                     "or delete it with calendar.delete_event")


@dataclass(frozen=True)
class ToolRunConfig(Config):
    """Everything a run of trace three depends on (§7.10), plus the scenario's changes."""

    trace_id: str = "trace-tool-001"
    clock: str = "2026-07-19T14:00:00+08:00"
    timezone: str = "Asia/Shanghai"
    subject: str = "user-42"
    capabilities: tuple[str, ...] = ("calendar.read", "calendar.write:primary")
    user_text: str = USER_TEXT
    tool: str = "calendar.create_event@v1"         # the one tool offered (§7.10)
    request_id: str = "req-42"
    service_clock: str = "2026-07-19T14:00:04+08:00"
    retry_budget: int = 3
    # -- scenario switches (all off on the happy path) --
    proposal_tamper: str | None = None            # "extra_field" | "not_json"
    edit_after_approval: tuple[tuple[str, str], ...] = ()
    tamper_digest: bool = False
    transport_plan: tuple[str, ...] = ()
    query_plan: tuple[str, ...] = ()               # per query by key: "answer" | "unavailable"
    new_key_per_attempt: bool = False
    cancel_after_commit: bool = False
    crash_point: str | None = None                # one of labkit.tools.executor.CRASH_POINTS
    crash_attempt: int | None = None              # None: the first attempt that reaches the point
    journal_path: str = ":memory:"               # a file makes the journal survive the process

    def __post_init__(self):
        if self.retry_budget < 1:
            raise ValueError(f"retry_budget must be >= 1 attempt, got {self.retry_budget}")
        if self.proposal_tamper not in (None, "extra_field", "not_json"):
            raise ValueError(f"proposal_tamper must be None, 'extra_field' or 'not_json', got {self.proposal_tamper!r}")


# -- the two model calls -----------------------------------------------------------------
@dataclass
class ModelCall:
    """One model call: its input IDs [1, T], prefill record, cache and decode."""

    model_call_id: str
    input_ids: np.ndarray
    prefill: object            # labkit.nn.transformer.ForwardResult of the prefilled tokens
    cache: object              # labkit.nn.KVCache after the decode
    decode: DecodeResult
    reused_prefix_tokens: int = 0
    first_logits: np.ndarray | None = None
    slots: AnswerSlots | None = None     # mc_02's answer-slot mask (labkit.tools.answer)

    @property
    def input_token_count(self) -> int:
        return int(self.input_ids.shape[1])

    @property
    def prefilled_tokens(self) -> int:
        return self.input_token_count - self.reused_prefix_tokens


def _feeder(decoder, cache):
    return lambda token: decoder.decode_step(np.array([token]), cache).next_logits[0]


def first_model_call(decoder, spec: ToolSpec, user_text: str, mask_for=None) -> ModelCall:
    """mc_01: prefill the prompt, then grammar-masked greedy decoding of the arguments.

    ``mask_for(text) -> allowed [V]`` replaces the schema grammar's mask (a hook)."""
    tok, template = ToolTokenizer(), ToolTemplate()
    ids = np.array([tok.encode(template.tool_call_prompt([spec], user_text))])
    prefill, cache = decoder.prefill(ids)
    grammar, stop = grammar_for(spec), tok.id_of("<|call_end|>")
    control = frozenset(i for i in range(tok.vocab_size) if tok.is_control(i))
    first = prefill.next_logits[0]
    mask_for = mask_for or (lambda text: grammar.mask(text, tok.pieces, stop, control))
    decode = greedy_decode(first, _feeder(decoder, cache), mask_for, tok.pieces, {stop: "tool_proposal_complete"}, MAX_PROPOSAL_TOKENS)
    return ModelCall("mc_01", ids, prefill, cache, decode, 0, first)


def answer_mask(tok: ToolTokenizer) -> np.ndarray:
    """A plain answer: every ordinary piece, and EOS; no other control token (the ablation
    of mc_02's answer-slot mask)."""
    allowed = np.array([not tok.is_control(i) for i in range(tok.vocab_size)])
    allowed[tok.id_of("<|eos|>")] = True
    return allowed


def common_prefix(a, b) -> int:
    """The number of leading positions where ``a`` [T_a] and ``b`` [T_b] hold the same IDs."""
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    n = min(a.size, b.size)
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n


def prefill_with_reuse(decoder, cached_ids: np.ndarray, cache, ids: np.ndarray, reuse=None):
    """Reuse ``cache`` (built over ``cached_ids`` [1, T_a] and maybe more) for the identical
    prefix of ``ids`` [1, T_b]; prefill only the rest.  Returns (reused, ForwardResult, cache).

    ``reuse(cached_ids [T_a], ids [T_b]) -> int`` decides how many positions are reused
    (default ``common_prefix``; a hook may replace it).  Positions < reused keep their K/V;
    positions reused…T_b−1 go through the forward pass."""
    reuse = reuse or common_prefix
    reused = reuse(np.asarray(cached_ids).reshape(-1).copy(), np.asarray(ids).reshape(-1).copy())
    if isinstance(reused, bool) or not isinstance(reused, int | np.integer):
        raise TypeError(f"the reused prefix length must be an int, got {type(reused).__name__}")
    reused = int(reused)
    limit = min(int(np.asarray(cached_ids).size), int(np.asarray(ids).size) - 1)
    if not 0 <= reused <= limit:
        raise ValueError(f"the reused prefix length must be in 0…{limit} (the cached input, leaving at "
                         f"least one new token to prefill), got {reused}")
    cache = cache.truncated(reused)
    prefill = decoder.forward(np.asarray(ids)[:, reused:], cache)
    return reused, prefill, cache


def second_model_call(decoder, spec: ToolSpec, user_text: str, first: ModelCall,
                      tool_message: dict, reuse=None) -> ModelCall:
    """mc_02: reuse mc_01's cache for the identical prefix, prefill the rest (the proposal and
    the tool message), then greedy decoding under the answer-slot mask derived from the
    proposal's arguments and ``tool_message`` (``labkit.tools.answer``)."""
    import json

    tok, template = ToolTokenizer(), ToolTemplate()
    text = template.after_tool_result([spec], user_text, first.decode.text, tool_message)
    ids = np.array([tok.encode(text)])
    reused, prefill, cache = prefill_with_reuse(decoder, first.input_ids, first.cache, ids, reuse)
    slots = AnswerSlots.for_result(json.loads(first.decode.text), tool_message, tok)
    first_logits = prefill.next_logits[0]
    decode = greedy_decode(first_logits, _feeder(decoder, cache), lambda text: slots.mask(text, tok.pieces),
                           tok.pieces, {slots.eos_id: "EOS"}, MAX_ANSWER_TOKENS)
    return ModelCall("mc_02", ids, prefill, cache, decode, reused, first_logits, slots)


@lru_cache(maxsize=8)
def _grammar(schema_json: str) -> SchemaGrammar:
    import json

    return SchemaGrammar.from_schema(json.loads(schema_json))


def grammar_for(spec: ToolSpec) -> SchemaGrammar:
    return _grammar(compact_json(spec.input_schema))


def top_logits(logits: np.ndarray, k: int = 3) -> list[list]:
    order = sorted(range(logits.size), key=lambda i: (-float(logits[i]), i))[:k]
    return [[int(i), round(float(logits[i]), 4)] for i in order]


def model_started_payload(call: ModelCall, artifacts: dict) -> dict:
    """Shapes read off the tensors (§7.11/§7.14) and summaries of IDs and raw logits.

    ``residual_shape`` is the logical residual stream [B, positions held after the prefill,
    d] (batch and width from the prefilled residual tensor, positions from the K cache);
    ``prefilled_residual_shape`` is the residual tensor this call really computed — [1, 46, 16]
    for mc_02, whose first 86 positions come from mc_01's cache."""
    layers = call.prefill.layers
    t = call.input_token_count
    prefilled = layers[-1].residual_out
    return {
        "model_call_id": call.model_call_id,
        "artifacts": artifacts,
        "input_token_count": t,
        "input_ids_shape": list(call.input_ids.shape),
        "residual_shape": [prefilled[0], layers[-1].cache_k[2], prefilled[2]],
        "prefilled_residual_shape": prefilled,
        "per_layer_kv_shape": [layer.cache_k for layer in layers],
        "raw_logits_shape": list(call.prefill.next_logits.shape),
        "prefill_cache_length": int(layers[0].cache_k[2]),
        "reused_prefix_tokens": call.reused_prefix_tokens,
        "prefilled_tokens": call.prefilled_tokens,
        "tensors": {
            "input_ids": tensor_summary(call.input_ids, [0, t - 1], digest=True),
            "raw_logits": {**tensor_summary(call.prefill.next_logits, t - 1, stats=True),
                           "values": top_logits(call.first_logits)},
        },
    }


# -- the run ------------------------------------------------------------------------------
@dataclass
class ToolTrace:
    """What a run leaves behind: events, the machine, the Invocation(s), the service."""

    config: ToolRunConfig
    events: list[dict]
    machine: InvocationMachine
    first_call: ModelCall
    second_call: ModelCall | None = None
    arguments_bytes: bytes = b""
    invocation: Invocation | None = None
    confirmation: Confirmation | None = None
    service: CalendarService | None = None
    journal: Journal | None = None
    executor: Executor | None = None
    request_status: str = ""
    answer: str | None = None

    @property
    def final_state(self) -> str:
        return self.machine.state.value


def _cut_short(raw: bytes, how: str | None) -> bytes:
    """The bytes the parser receives: the decoder's own, or (``not_json``) their first half."""
    return raw[: len(raw) // 2] if how == "not_json" else raw


def _merged(arguments: dict, how: str | None) -> dict:
    """The arguments handed to the validator: the parsed ones, or (``extra_field``) those with a
    ``notify_all`` merged in after parsing — past the grammar, which only shaped the bytes."""
    return {**arguments, "notify_all": True} if how == "extra_field" else arguments


def run_tool_trace(config: ToolRunConfig | None = None, hooks: ToolHooks | None = None, *, decoder=None,
                   spec: ToolSpec | None = None) -> ToolTrace:
    """Run trace three under ``config``; returns the events t00… and everything computed.

    ``hooks`` (``labkit.tools.hooks.ToolHooks``) substitutes pieces of the runtime (the
    grammar mask, the digest binding test, the prefix reuse, the service's idempotent
    execute) — how the book's exercises run a reader's function inside the real runtime."""
    from labkit.tools.model import load_decoder
    from labkit.tools.toolspec import load_toolspec

    config = config or ToolRunConfig()
    hooks = hooks or ToolHooks()
    spec = find_tool([spec or load_toolspec()], config.tool)
    decoder = decoder or load_decoder()
    rec = TraceRecorder(config.trace_id, prefix="t")
    artifacts = {"model_id": CONFIG.model_id, "template_id": TEMPLATE_ID, "tokenizer_id": TOKENIZER_ID,
                 "sampler": STRATEGY, "tool_version": spec.ref}
    machine = InvocationMachine()
    service = CalendarService(config.service_clock, execute=hooks.service_execute)
    journal = Journal(config.journal_path)

    # t00–t01: mc_01
    first = first_model_call(decoder, spec, config.user_text, hooks.proposal_mask)
    trace = ToolTrace(config, rec.events, machine, first, service=service, journal=journal)
    rec.emit("model runtime", "model.started", 0, model_started_payload(first, artifacts))
    generated = first.decode.text.encode("utf-8")
    raw = _cut_short(generated, config.proposal_tamper)
    trace.arguments_bytes = raw
    steps = first.decode.steps
    rec.emit("decoder", "proposal.generated", len(steps), {
        "model_call_id": "mc_01", "proposal_id": "p_01", "state": machine.state.value,
        "generated_tokens": len(steps), "token_ids": list(first.decode.token_ids),
        "allowed_counts": [s.allowed_count for s in steps],
        "forced_steps": sum(s.forced for s in steps),
        "arguments_utf8_hex": generated.hex(), "finish_reason": first.decode.finish_reason,
        "final_cache_length": first.cache.length,
    })

    def close(status: str, answer: str | None = None) -> ToolTrace:
        trace.request_status = status
        rec.emit("tracing", "trace.closed", None, {
            "state": machine.state.value, "request_status": status,
            "external_commit": bool(service.store),
            "commit": {"calendar_events": sorted(service.store),
                       "events_for_key": service.events_with_key(f"{config.request_id}:create-event:1"),
                       "executions": service.executions},
            "state_history": [f"{a}→{b}" for a, b, _ in machine.history],
        })
        trace.answer = answer
        return trace

    # t02: parse
    try:
        arguments = parse_arguments(raw)
    except ProposalError as exc:
        machine.move(State.PARSE_REJECTED, rec.next_event_id())
        rec.emit("JSON parser", "proposal.rejected", None, {
            "state": machine.state.value, "received_utf8_hex": raw.hex(), "reason": str(exc)})
        return close("rejected")
    machine.move(State.PARSED, rec.next_event_id())
    rec.emit("JSON parser", "proposal.parsed", None, {
        "proposal_id": "p_01", "state": machine.state.value, "keys": list(arguments)})

    # t03: validate
    arguments = _merged(arguments, config.proposal_tamper)
    report = validate_arguments(spec, arguments)
    if not report.valid:
        machine.move(State.VALIDATION_REJECTED, rec.next_event_id())
        rec.emit("validator", "schema.rejected", None, {
            "state": machine.state.value, "keys": list(arguments), "validator": report.validator,
            "format_checker": report.format_checker, "errors": [list(e) for e in report.errors]})
        return close("rejected")
    machine.move(State.VALIDATED, rec.next_event_id())
    rec.emit("validator", "schema.validated", None, {
        "state": machine.state.value, "validator": report.validator,
        "format_checker": report.format_checker, "errors": []})

    # t04: normalise
    invocation = normalize(spec, arguments, invocation_id="inv_01", clock=config.clock,
                           tz_name=config.timezone, subject=config.subject)
    trace.invocation = invocation
    machine.attach(journal, invocation.to_json(), config.retry_budget)
    rec.emit("normalizer", "invocation.normalized", None, {
        "state": machine.state.value, "invocation_id": invocation.invocation_id,
        "reference_clock": config.clock, "timezone": config.timezone,
        "invocation": invocation.to_json()})

    # t05: authorise
    decision = authorize(invocation, Principal(config.subject, config.capabilities))
    auth = {"subject": decision.subject, "capability": decision.capability, "scope": decision.scope,
            "reason": decision.reason}
    if not decision.allowed:
        machine.move(State.AUTHORIZATION_DENIED, rec.next_event_id())
        rec.emit("authorizer", "authorization.denied", None, {"state": machine.state.value, **auth})
        return close("denied")
    machine.move(State.AUTHORIZED, rec.next_event_id())
    rec.emit("authorizer", "authorization.allowed", None, {"state": machine.state.value, **auth})

    # t06–t07: confirm, bound to the digest
    digest = invocation_digest(invocation)
    card = confirmation_card(invocation, config.timezone)
    machine.move(State.PREPARED, rec.next_event_id())
    rec.emit("confirmation", "confirmation.requested", None, {
        "state": machine.state.value, "invocation_id": invocation.invocation_id,
        "invocation_digest": digest, "card": card.lines()})
    approved = digest if not config.tamper_digest else _flip_last_hex(digest)
    confirmation = Confirmation("confirm_01", invocation.invocation_id, approved, "approve")
    trace.confirmation = confirmation
    known = {invocation.invocation_id: invocation}
    presented = invocation
    if config.edit_after_approval:
        presented = invocation.with_arguments("inv_02", **dict(config.edit_after_approval))
        known[presented.invocation_id] = presented
    try:
        check_confirmation(confirmation, presented, known, matches=hooks.digest_matches)
    except ConfirmationError as exc:
        machine.move(State.CONFIRMATION_REJECTED, rec.next_event_id())
        rec.emit("confirmation", "confirmation.rejected", None, {
            "state": machine.state.value, "confirmation_id": confirmation.confirmation_id,
            "decision": confirmation.decision, "approved_digest": confirmation.invocation_digest,
            "presented_invocation_id": presented.invocation_id,
            "presented_digest": invocation_digest(presented), "digest_matches": False,
            "reason": str(exc)})
        return close("needs_new_confirmation")
    rec.emit("confirmation", "confirmation.approved", None, {
        "state": machine.state.value, "confirmation_id": confirmation.confirmation_id,
        "decision": confirmation.decision, "invocation_digest": confirmation.invocation_digest,
        "digest_matches": True})

    # t08–t09: execute with an idempotency key; the commit boundary is the event ID
    journal.update(invocation.invocation_id, approved_digest=confirmation.invocation_digest)
    transport = ServiceTransport(service, config.transport_plan, config.query_plan)
    crash = CrashPlan(config.crash_point, config.crash_attempt) if config.crash_point else None
    executor = Executor(transport, config.request_id, config.retry_budget, config.new_key_per_attempt, crash,
                        emit=rec.emit, next_event_id=rec.next_event_id)
    trace.executor = executor
    try:
        result = executor.execute(machine, presented, confirmation.invocation_digest)
    except ConfirmationError as exc:          # the executor's own guard: nothing was sent
        machine.move(State.CONFIRMATION_REJECTED, rec.next_event_id())
        rec.emit("executor", "execution.refused", None, {
            "state": machine.state.value, "invocation_id": presented.invocation_id,
            "approved_digest": confirmation.invocation_digest, "presented_digest": invocation_digest(presented),
            "reason": str(exc), "side_effect": False})
        return close("needs_new_confirmation")
    except Crash as crashed:
        rec.emit("runtime", "runtime.crashed", None, {
            "journal_state": journal.entry(invocation.invocation_id).state, "reason": str(crashed)})
        restarted = Executor(transport, config.request_id, config.retry_budget, config.new_key_per_attempt,
                             emit=rec.emit, next_event_id=rec.next_event_id)
        trace.executor = restarted
        rec.emit("runtime", "runtime.recovered", None, {
            "journal_state": journal.entry(invocation.invocation_id).state,
            "journal_transitions": len(journal.transitions(invocation.invocation_id))})
        machine, result = recover_invocation(journal, restarted, invocation.invocation_id)
        trace.machine = machine
    if result is None:
        return close("failed" if machine.state is State.FAILED else "outcome_unknown")

    if config.cancel_after_commit:
        rec.emit("runtime", "request.cancelled", None, {
            "state": machine.state.value, "side_effect": True, "second_model_call": "skipped",
            "commit": {"status": result["status"], "event_id": result["event_id"]},
            "guidance": RECOVERY_GUIDANCE})
        return close(CANCELLED_AFTER_COMMIT)

    # t10: the result becomes a tool message
    tool_message = {"tool_call_id": "p_01", "status": result["status"], "event_id": result["event_id"],
                    "start": result["start"]}
    machine.move(State.OBSERVED, rec.next_event_id())
    rec.emit("runtime", "result.encoded", None, {
        "state": machine.state.value, "side_effect": True, "tool_message": tool_message})

    # t11–t13: mc_02 sees the result, then answers
    second = second_model_call(decoder, spec, config.user_text, first, tool_message, hooks.reusable_prefix)
    trace.second_call = second
    rec.emit("model runtime", "model.started", 0, {
        **model_started_payload(second, {**artifacts, "sampler": ANSWER_STRATEGY}), "tool_call_id": "p_01",
        "tool_result_status": result["status"], "tool_result_event_id": result["event_id"]})
    answer = second.decode
    rec.emit("transport", "text.delta", len(answer.steps), {
        "model_call_id": "mc_02",
        "deltas": [s.piece for s in answer.steps if s.chosen_id != ToolTokenizer().id_of("<|eos|>")],
        "token_ids": list(answer.token_ids), "utf8_hex": answer.text.encode("utf-8").hex()})
    rec.emit("runtime", "response.completed", None, {
        "model_call_id": "mc_02", "finish_reason": answer.finish_reason, "text": answer.text,
        "output_tokens": len(answer.token_ids), "final_cache_length": second.cache.length})
    return close("completed", answer.text)


def _flip_last_hex(digest: str) -> str:
    last = digest[-1]
    return digest[:-1] + ("0" if last != "0" else "1")
