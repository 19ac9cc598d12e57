"""Trace three's two model calls on toy-tool-decoder-v1: mc_01 under the schema grammar's mask (§7.11),
mc_02 reusing mc_01's prefix cache, under the answer-slot mask (§7.14).  Both decode greedily:

    y_t = argmax_v { raw_logits_t[v] : allowed_t[v] }      (ties → the lowest ID)

until a stop token or ``max_tokens`` (finish reason ``length``).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from labkit.core.events import tensor_summary, top_values
from labkit.tools.answer import TIMEZONE, AnswerSlots
from labkit.tools.grammar import SchemaGrammar
from labkit.tools.tokenizer import ToolTemplate, ToolTokenizer, compact_json
from labkit.tools.toolspec import ToolSpec

MAX_PROPOSAL_TOKENS = 64


@dataclass(frozen=True)
class DecodeStep:
    """One decision: the allowed set, the chosen piece and the output text after it."""

    step: int
    allowed_ids: tuple[int, ...]
    chosen_id: int
    piece: str
    text_after: str
    raw_logits: np.ndarray = field(default=None, repr=False, compare=False)  # [V]

    @property
    def allowed_count(self) -> int:
        return len(self.allowed_ids)


@dataclass(frozen=True)
class DecodeResult:
    steps: tuple[DecodeStep, ...]
    token_ids: tuple[int, ...]
    text: str  # ordinary pieces only (stop tokens excluded)
    finish_reason: str


def greedy_decode(
    first_logits: np.ndarray,
    feed: Callable[[int], np.ndarray],
    mask_for: Callable[[str], np.ndarray],
    pieces,
    stop_ids: dict[int, str],
    max_tokens: int,
) -> DecodeResult:
    """Masked greedy decoding from raw logits [V]: ``feed(token)`` → the next [V], ``mask_for(text)`` →
    allowed [V] for the output so far; ``stop_ids`` maps each stop token to its finish reason."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    logits = np.asarray(first_logits, dtype=np.float64).reshape(-1)
    steps, ids, text = [], [], ""
    for step in range(max_tokens):
        allowed = np.asarray(mask_for(text), dtype=bool)
        if allowed.shape != logits.shape:
            raise ValueError(f"mask must be [V] = [{logits.size}], got {list(allowed.shape)}")
        if not allowed.any():
            raise ValueError(f"no token is allowed at step {step} after {text!r}")
        masked = np.where(allowed, logits, -np.inf)
        chosen = int(np.argmax(masked))
        allowed_ids = tuple(int(i) for i in np.flatnonzero(allowed))
        if chosen not in stop_ids:
            text += pieces[chosen]
        ids.append(chosen)
        steps.append(DecodeStep(step, allowed_ids, chosen, pieces[chosen], text, logits))
        if chosen in stop_ids:
            return DecodeResult(tuple(steps), tuple(ids), text, stop_ids[chosen])
        logits = np.asarray(feed(chosen), dtype=np.float64).reshape(-1)
    return DecodeResult(tuple(steps), tuple(ids), text, "length")


@dataclass
class ModelCall:
    """One model call: its input IDs [1, T], prefill record, cache and decode."""

    model_call_id: str
    input_ids: np.ndarray
    prefill: object  # labkit.nn.transformer.ForwardResult of the prefilled tokens
    cache: object  # labkit.nn.KVCache after the decode
    decode: DecodeResult
    reused_prefix_tokens: int = 0
    first_logits: np.ndarray | None = None
    slots: AnswerSlots | None = None  # mc_02's answer-slot mask (labkit.tools.answer)

    @property
    def input_token_count(self) -> int:
        return int(self.input_ids.shape[1])

    @property
    def prefilled_tokens(self) -> int:
        return self.input_token_count - self.reused_prefix_tokens


def _feeder(decoder, cache):
    return lambda token: decoder.decode_step(np.array([token]), cache).next_logits[0]


def proposal_mask(grammar: SchemaGrammar):
    """mc_01's ``mask_for(text) -> allowed [V]``: ``grammar``'s mask, ``<|call_end|>`` once complete."""
    tok = ToolTokenizer()
    stop = tok.id_of("<|call_end|>")
    control = frozenset(i for i in range(tok.vocab_size) if tok.is_control(i))
    return lambda text: grammar.mask(text, tok.pieces, stop, control)


def first_model_call(decoder, spec: ToolSpec, user_text: str, mask_for=None) -> ModelCall:
    """mc_01: prefill the prompt, then greedy decoding of the arguments under the grammar's mask or ``mask_for``."""
    tok, template = ToolTokenizer(), ToolTemplate()
    ids = np.array([tok.encode(template.tool_call_prompt([spec], user_text))])
    prefill, cache = decoder.prefill(ids)
    stop, first = tok.id_of("<|call_end|>"), prefill.next_logits[0]
    mask_for = mask_for or proposal_mask(grammar_for(spec))
    decode = greedy_decode(
        first, _feeder(decoder, cache), mask_for, tok.pieces, {stop: "tool_proposal_complete"}, MAX_PROPOSAL_TOKENS
    )
    return ModelCall("mc_01", ids, prefill, cache, decode, 0, first)


def common_prefix(a, b) -> int:
    """The number of leading positions where ``a`` [T_a] and ``b`` [T_b] hold the same IDs."""
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    n = min(a.size, b.size)
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n


def prefill_with_reuse(decoder, cached_ids: np.ndarray, cache, ids: np.ndarray, reuse=None):
    """Keep ``cache``'s K/V (built over ``cached_ids`` [1, T_a]) for the first ``reuse(cached_ids [T_a], ids [T_b])``
    positions of ``ids`` [1, T_b] (default ``common_prefix``; a hook may replace it), prefill the rest.
    Returns (reused, ForwardResult, cache)."""
    reuse = reuse or common_prefix
    reused = reuse(np.asarray(cached_ids).reshape(-1).copy(), np.asarray(ids).reshape(-1).copy())
    if isinstance(reused, bool) or not isinstance(reused, int | np.integer):
        raise TypeError(f"the reused prefix length must be an int, got {type(reused).__name__}")
    reused = int(reused)
    limit = min(int(np.asarray(cached_ids).size), int(np.asarray(ids).size) - 1)
    if not 0 <= reused <= limit:
        raise ValueError(
            f"the reused prefix length must be in 0…{limit} (the cached input, leaving at "
            f"least one new token to prefill), got {reused}"
        )
    cache = cache.truncated(reused)
    prefill = decoder.forward(np.asarray(ids)[:, reused:], cache)
    return reused, prefill, cache


def second_model_call(
    decoder,
    spec: ToolSpec,
    user_text: str,
    first: ModelCall,
    tool_message: dict,
    reuse=None,
    timezone=TIMEZONE,
    approved: dict | None = None,
) -> ModelCall:
    """mc_02: reuse mc_01's cache for the identical prefix, prefill the rest (the proposal and
    the tool message), then greedy decoding under the answer-slot mask derived from the
    proposal's arguments and ``tool_message``, checked against what the user ``approved`` (the
    Invocation's arguments and the call ID), times said in ``timezone`` (``labkit.tools.answer``)."""
    import json

    tok, template = ToolTokenizer(), ToolTemplate()
    text = template.after_tool_result([spec], user_text, first.decode.text, tool_message)
    ids = np.array([tok.encode(text)])
    reused, prefill, cache = prefill_with_reuse(decoder, first.input_ids, first.cache, ids, reuse)
    slots = AnswerSlots.for_result(json.loads(first.decode.text), tool_message, tok, timezone, approved)
    first_logits = prefill.next_logits[0]
    decode = greedy_decode(
        first_logits,
        _feeder(decoder, cache),
        lambda text: slots.mask(text, tok.pieces),
        tok.pieces,
        {slots.eos_id: "EOS"},
        slots.max_tokens,
    )
    return ModelCall("mc_02", ids, prefill, cache, decode, reused, first_logits, slots)


@lru_cache(maxsize=8)
def _grammar(schema_json: str) -> SchemaGrammar:
    from labkit.core import strictjson

    return SchemaGrammar.from_schema(strictjson.loads(schema_json, "tool schema"))


def grammar_for(spec: ToolSpec) -> SchemaGrammar:
    return _grammar(compact_json(spec.input_schema))


def model_started_payload(call: ModelCall, artifacts: dict) -> dict:
    """Shapes read off the tensors (§7.11/§7.14) and summaries of IDs and raw logits.  ``residual_shape`` is
    the logical stream [B, positions cached, d]; ``prefilled_residual_shape`` what this call computed —
    [1, 46, 16] for mc_02, whose first 86 positions come from mc_01's cache."""
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
            "raw_logits": {
                **tensor_summary(call.prefill.next_logits, t - 1, stats=True),
                "values": top_values(call.first_logits, 3),
            },
        },
    }
