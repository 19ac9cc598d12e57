"""Chapter 7's values, one row per checkable item, each asserted against the chapter itself
(issue 44, item 4).

``ROWS`` is the table: the section, the chapter's text as printed, the value as the chapter
writes it (typed here from the chapter, never read from a golden file or a fixture's notes),
and how labkit computes it.  One parametrized test runs labkit's real runtimes once per
module (trace one, trace two, trace three and the fault runs §7.13/§7.15 name) and asserts
that the computed value equals the chapter's: exactly for IDs, shapes, names, event orders
and strings; within a declared tolerance for the floats the chapter prints rounded.

Three kinds of row:

* an ordinary row: labkit must compute the chapter's value;
* a departure row (``book=Departure(...)``): the book deliberately computes something else
  and a page says so; the test asserts the book's value *and* that the page's ``.md`` holds
  the departure note (a distinctive phrase);
* a mismatch row (``mismatch="..."``): labkit does not compute the chapter's value and no page
  documents it; the row is ``xfail(strict=True)``, so it fails the day the code agrees with
  the chapter without the row being updated.

Items ``test_chapter7_figures.py`` already asserts against the chapter's value are not
repeated here; ``FIGURES_COVERED`` names them and the test that holds each, and the last tests
check that the table cannot silently shrink and that those tests still exist.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rfc8785
from _helpers import CHAPTER_INVOCATION

from labkit.core.events import ENVELOPE_FIELDS, read_golden
from labkit.core.faults import DETOKENIZER, MODEL_PATH, PROCESSORS
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import DiffusionConfig, ddim_step, run_diffusion
from labkit.diffusion.config import DiffusionHooks
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import PhiloxNormalStream
from labkit.diffusion.text_encoder import load_text_encoder
from labkit.text.model import load_decoder as load_text_decoder
from labkit.text.processors import ProcessorContext, control_token_mask, minimum_length_eos_mask
from labkit.text.runtime import run_text_trace
from labkit.tools.faults import faulty_config
from labkit.tools.model import load_decoder as load_tool_decoder
from labkit.tools.runtime import run_tool_trace
from labkit.tools.tokenizer import ToolTokenizer
from labkit.tools.toolspec import load_toolspec
from labkit.trace import catalogue
from labkit.trace.divergence import RULES, TraceKindMismatch, first_divergence

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "notebooks" / "07-traces"


# -- the chapter's own values that several rows use ------------------------------------------

#: §7.3: the rendered template, as printed
RENDERED = "<bos><system>简洁回答</system><user>天空为什么是蓝色？</user><assistant>"
#: §7.2: processor_order, as printed
PROCESSOR_ORDER = [
    "control_token_mask",
    "minimum_length_eos_mask",
    "grammar_mask",
    "repetition_transforms",
    "temperature_disabled",
    "truncation_disabled",
]
#: §7.10: the ToolSpec calendar.create_event@v1, as printed
TOOLSPEC = {
    "name": "calendar.create_event",
    "version": "v1",
    "side_effect_class": "write",
    "input_schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "calendar_id": {"type": "string", "enum": ["primary"]},
            "title": {"type": "string", "minLength": 1, "maxLength": 80},
            "local_date": {"type": "string", "format": "date"},
            "local_time": {"type": "string", "pattern": "^(?:[01][0-9]|2[0-3]):[0-5][0-9]$"},
            "duration_minutes": {"type": "integer", "minimum": 1, "maximum": 1440},
        },
        "required": ["calendar_id", "title", "local_date", "local_time", "duration_minutes"],
        "additionalProperties": False,
    },
}
#: §7.11: the parsed arguments, as printed
ARGUMENTS = {
    "calendar_id": "primary",
    "title": "带护照",
    "local_date": "2026-07-20",
    "local_time": "09:00",
    "duration_minutes": 10,
}
#: §7.13: what the first and only external attempt returns, as printed
RESULT = {
    "status": "ok",
    "event_id": "evt_6K2",
    "committed_at": "2026-07-19T14:00:04+08:00",
    "start": "2026-07-20T09:00:00+08:00",
}
KEY = "req-42:create-event:1"  # §7.13
ANSWER = "已在 2026 年 7 月 20 日上午 9:00 创建“带护照”提醒。"  # §7.14
#: §7.13's side-effect column in labkit's vocabulary: True → 是, False → 否, anything else → 尚未确认
SIDE_EFFECT_WORDS = {True: "是", False: "否"}


def digest(value) -> str:
    """The runtime's H: SHA-256 over RFC 8785 canonical JSON."""
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


# -- the runs, once per module ---------------------------------------------------------------


class Runs:
    """Every run and artifact the rows read, computed on first use and kept for the module."""

    @cached_property
    def text(self):
        return run_text_trace()

    @cached_property
    def te(self) -> dict:
        return {e["event_id"]: e for e in self.text.events}

    @cached_property
    def text_weights(self):
        return load_text_decoder().weights

    @cached_property
    def diffusion(self):
        return run_diffusion()

    @cached_property
    def de(self) -> dict:
        return {e["event_id"]: e for e in self.diffusion.events}

    @cached_property
    def captured_cfg(self) -> list[np.ndarray]:
        """The CFG batches [2, 4, 64, 64] of a second run whose combine step records its input."""
        batches = []

        def combine(epsilon_batch, guidance_scale):
            batches.append(np.array(epsilon_batch))
            return classifier_free_guidance(epsilon_batch, guidance_scale)

        run_diffusion(hooks=DiffusionHooks(cfg_combine=combine), decode=False)
        return batches

    def diffusion_variant(self, **changes):
        """d00–d05 of a run with one change of §7.9's last sentence (decode=False)."""
        return run_diffusion(DiffusionConfig(**changes), decode=False).events

    @cached_property
    def tool_decoder(self):
        return load_tool_decoder()

    @cached_property
    def tool(self):
        return run_tool_trace(decoder=self.tool_decoder)

    @cached_property
    def tt(self) -> dict:
        return {e["event_id"]: e for e in self.tool.events}

    def fault(self, name: str):
        cache = self.__dict__.setdefault("_faults", {})
        if name not in cache:
            cache[name] = run_tool_trace(faulty_config(name), decoder=self.tool_decoder)
        return cache[name]

    def fe(self, name: str) -> dict:
        return {e["event_id"]: e for e in self.fault(name).events}

    @cached_property
    def ddim_2d(self) -> dict:
        """§7.8's sub-fixture (labkit's copy of the inputs) run through labkit's DDIM step."""
        fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
        a = {int(k): v for k, v in fx["alpha_bar"].items()}
        z2, e2, e1 = (np.array(fx[k], dtype=np.float64) for k in ("z_2", "epsilon_2", "epsilon_1"))
        z1, x0_2 = ddim_step(z2, e2, a[2], a[1], eta=fx["eta"])
        z0, x0_1 = ddim_step(z1, e1, a[1], a[0], eta=fx["eta"])
        return {"fixture": fx, "x0_hat_2": x0_2, "z_1": z1, "x0_hat_1": x0_1, "z_0": z0}


@pytest.fixture(scope="module")
def runs() -> Runs:
    return Runs()


# -- small readers the rows share ------------------------------------------------------------


def typed(events: dict, event_id: str) -> tuple[str, str]:
    """(event_type, component) of one event."""
    return events[event_id]["event_type"], events[event_id]["component"]


def pay(events: dict, event_id: str) -> dict:
    return events[event_id]["payload"]


def side_effect_word(value) -> str:
    return SIDE_EFFECT_WORDS.get(value, "尚未确认") if isinstance(value, bool) else "尚未确认"


def version_suffix(artifact_id: str) -> str:
    """'v1' of 'chat-template-v1': the chapter names the template and tokenizer by version only."""
    return artifact_id.rsplit("-", 1)[-1]


def decode_events(r: Runs, step: int) -> list[tuple]:
    """The four events selection step ``step`` makes, with the values §7.4's pattern names."""
    out = []
    for event_id in r.text.steps[step - 1].event_ids:
        e = r.te[event_id]
        p = e["payload"]
        if e["event_type"] == "token.selected":
            out.append(("token.selected", p["step"]))
        elif e["event_type"] == "stream.delta":
            out.append(("stream.delta", p["sequence_no"]))
        elif e["event_type"] == "decode.started":
            out.append(("decode.started", p["consuming"], p["position"]))
        else:
            out.append((e["event_type"], p["new_cache_length"]))
    return out


def ledger(r: Runs, event_id: str, name: str) -> list:
    """One object's shape in each layer, from the ledger the run recorded at ``event_id``."""
    return [layer[name] for layer in pay(r.te, event_id)["ledger"]]


def first_layer(call) -> dict:
    return call.prefill.layers[0].ledger()


def tensor_key_sets(events: list[dict]) -> list[set]:
    return [set(t) for e in events for t in e["payload"].get("tensors", {}).values()]


def levels(events: list[dict]) -> list[str]:
    return sorted({t["level"] for e in events for t in e["payload"].get("tensors", {}).values() if "level" in t})


def rng_consumers(events: list[dict]) -> list[str]:
    return [
        e["event_id"]
        for e in events
        if "rng" in e["payload"] and e["payload"]["rng"]["counter_after"] != e["payload"]["rng"]["counter_before"]
    ]


def same_trace(a: list[dict], b: list[dict]) -> list:
    """§7.9's verdict on two runs, in the chapter's words, and the event where they part."""
    found = first_divergence(a, b)
    return ["构成同一轨迹", None] if found is None else ["不构成同一轨迹", found.event_ids[0]]


#: labkit's suspects, in the words of §7.5's three diagnosis rules
SUSPECT_WORDS = {
    MODEL_PATH: "模型/数值路径",
    PROCESSORS: "处理器与 tie-break",
    DETOKENIZER: "tokenizer decoder 与 transport",
}


def diagnosis(r: Runs, fault: str, premise: Callable[[dict, dict], bool]) -> list:
    """[the rule's premise holds?, the first divergence from trace one, its suspect in the chapter's words]."""
    faulty = catalogue.run_events("text", fault)
    found = first_divergence(r.text.events, faulty)
    by_id = {e["event_id"]: e for e in faulty}
    return [premise(r.te, by_id), found.event_ids[0], SUSPECT_WORDS.get(found.suspect, found.suspect)]


def logits_equal_selection_differs(a: dict, b: dict) -> bool:
    selected = [e for e in a if a[e]["event_type"] == "token.selected"]
    pairs = [(a[e]["payload"], b[e]["payload"]) for e in selected if e in b]
    same_logits = all(pa["tensors"]["raw_logits"] == pb["tensors"]["raw_logits"] for pa, pb in pairs)
    return same_logits and any(pa["token_id"] != pb["token_id"] for pa, pb in pairs)


def refused_across_kinds(r: Runs) -> str:
    try:
        first_divergence(r.text.events, r.diffusion.events)
    except TraceKindMismatch:
        return "not compared step by step"
    return "compared step by step"


#: §7.17's comparisons, in the chapter's order, named by labkit's rule for each
RULE_LINES = {
    "event_type_and_parent": "compare event type and parent relation",
    "artifact_ids": "compare immutable artifact IDs",
    "discrete_state": "compare discrete state exactly",
    "tensors": "compare tensors under declared tolerance",
    "rng_counter": "compare RNG counter before random choice",
    "external_commit": "compare external commit/result identity",
}


# -- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Departure:
    """The book computes ``value`` instead of the chapter's; ``page`` says so in ``phrase``."""

    value: Any
    page: str
    phrase: str


@dataclass(frozen=True)
class Row:
    section: str
    name: str  # the row's test ID
    text: str  # the chapter's text, as printed
    chapter: Any  # the value, as the chapter writes it
    how: str  # how labkit computes it
    compute: Callable[[Runs], Any]
    tol: float | None = None  # absolute tolerance for floats the chapter prints rounded
    book: Departure | None = None
    mismatch: str | None = None  # labkit differs and no page says so: xfail(strict=True)


def row(section, name, text, chapter, how, compute, **kw) -> Row:
    return Row(section, name, text, chapter, how, compute, **kw)


LOGIT = 1e-5  # the fixture is built to reproduce the chapter's two-decimal logits; pages 02/03 use 1e-5
SIX_DECIMALS = 1e-6  # §7.8 prints six decimals; the sub-fixture declares 1e-6


ROWS: list[Row] = [
    # ---------------------------------------------------------------- §7.1 the record format
    row(
        "7.1",
        "envelope-fields",
        "trace_id, event_id, parent_event_id, component, event_type, logical_step, payload",
        ["trace_id", "event_id", "parent_event_id", "component", "event_type", "logical_step", "payload"],
        "the key list of every event of the three runs (all of them, if they are not one list)",
        lambda r: (lambda keys: keys[0] if len(keys) == 1 else keys)(
            sorted({tuple(e) for run in (r.text, r.diffusion, r.tool) for e in run.events})
        ),
    ),
    row(
        "7.1",
        "envelope-example-e05",
        '"trace_id": "trace-text-001", "event_id": "e05", "parent_event_id": "e04", "component": "decoder", '
        '"event_type": "token.selected", "logical_step": 1',
        {
            "trace_id": "trace-text-001",
            "event_id": "e05",
            "parent_event_id": "e04",
            "component": "decoder",
            "event_type": "token.selected",
            "logical_step": 1,
        },
        "trace one's event e05, envelope without payload",
        lambda r: {k: v for k, v in r.te["e05"].items() if k != "payload"},
    ),
    row(
        "7.1",
        "event-ids-order-one-trace",
        "事件序号只在一条 trace 内排序 (e00 … e24, each event's parent the one before)",
        [[f"e{i:02d}" for i in range(25)], [None] + [f"e{i:02d}" for i in range(24)]],
        "trace one's event IDs and parent IDs",
        lambda r: [[e["event_id"] for e in r.text.events], [e["parent_event_id"] for e in r.text.events]],
    ),
    row(
        "7.1",
        "wall-clock-beside-envelope",
        "墙钟时间另行记录",
        ["outside every envelope", "one time per event"],
        "trace three's recorder keeps a wall clock per event ID; no envelope has a time field",
        lambda r: [
            "outside every envelope" if all(set(e) == set(ENVELOPE_FIELDS) for e in r.tool.events) else "inside",
            "one time per event"
            if sorted(r.tool.rec.wall_clock) == [e["event_id"] for e in r.tool.events]
            else "missing",
        ],
    ),
    row(
        "7.1",
        "tensor-event-minimum",
        "张量事件至少保存 shape、dtype、逻辑位置和可选摘要",
        ["dtype", "position", "shape"],
        "the keys every tensor record of the three runs has in common",
        lambda r: sorted(set.intersection(*tensor_key_sets(r.text.events + r.diffusion.events + r.tool.events))),
    ),
    row(
        "7.1",
        "tool-event-commit-status",
        "工具事件还保存 commit status",
        "ok",
        "t09's commit status in trace three's run",
        lambda r: pay(r.tt, "t09")["commit"]["status"],
    ),
    row(
        "7.1",
        "token-ids-listed",
        "本章夹具直接列出小规模 token IDs",
        [[1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6]],
        "e02's payload lists the IDs themselves, not only a digest",
        lambda r: pay(r.te, "e02")["input_ids"],
    ),
    # ---------------------------------------------------------------- §7.2 trace one's artifacts
    row(
        "7.2",
        "model_id",
        "model_id = toy-decoder-v1",
        "toy-decoder-v1",
        "the loaded decoder's configuration",
        lambda r: load_text_decoder().config.model_id,
    ),
    row("7.2", "B", "B = 1", 1, "batch axis of the run's input_ids", lambda r: r.text.input_ids.shape[0]),
    row("7.2", "L", "L = 2", 2, "layers in the stored weights", lambda r: len(r.text_weights.layers)),
    row("7.2", "d", "d = 8", 8, "embedding width of the stored weights", lambda r: r.text_weights.embedding.shape[1]),
    row(
        "7.2",
        "H_q",
        "H_q = 2",
        2,
        "head axis of Q in the prefill's layer 0",
        lambda r: r.text.prefill.layers[0].ledger()["Q"][1],
    ),
    row(
        "7.2",
        "H_kv",
        "H_kv = 1",
        1,
        "head axis of K in the prefill's layer 0",
        lambda r: r.text.prefill.layers[0].ledger()["K"][1],
    ),
    row(
        "7.2",
        "d_h",
        "d_h = 4",
        4,
        "last axis of Q in the prefill's layer 0",
        lambda r: r.text.prefill.layers[0].ledger()["Q"][3],
    ),
    row(
        "7.2",
        "vocabulary_size",
        "vocabulary_size = 20",
        20,
        "output head width of the stored weights",
        lambda r: r.text_weights.output.shape[1],
    ),
    row(
        "7.2",
        "dtype",
        "dtype = float32",
        ["float32"],
        "dtypes of every stored weight and of the run's logits",
        lambda r: sorted(
            {str(a.dtype) for a in r.text_weights.to_arrays().values()} | {str(r.text.prefill.next_logits.dtype)}
        ),
    ),
    row(
        "7.2",
        "strategy",
        "strategy = greedy",
        "greedy",
        "e00's sampler in the run",
        lambda r: pay(r.te, "e00")["artifacts"]["sampler"],
    ),
    row(
        "7.2",
        "processor_order",
        "processor_order = [control_token_mask, …, truncation_disabled]",
        PROCESSOR_ORDER,
        "the order recorded at every token.selected of the run",
        lambda r: {
            tuple(e["payload"]["processor_order"]) for e in r.text.events if e["event_type"] == "token.selected"
        }.pop(),
    ),
    row(
        "7.2",
        "minimum_output_tokens",
        "minimum_output_tokens = 1",
        1,
        "e00 payload",
        lambda r: pay(r.te, "e00")["minimum_output_tokens"],
    ),
    row(
        "7.2",
        "max_output_tokens",
        "max_output_tokens = 8",
        8,
        "e00 payload",
        lambda r: pay(r.te, "e00")["max_output_tokens"],
    ),
    row(
        "7.2", "stop_sequences", "stop_sequences = []", [], "e00 payload", lambda r: pay(r.te, "e00")["stop_sequences"]
    ),
    row(
        "7.2",
        "no-dropout",
        "推理模式无 dropout",
        "the same logits on every pass",
        "a second prefill of the same IDs gives bit-identical next logits",
        lambda r: (
            "the same logits on every pass"
            if np.array_equal(load_text_decoder().prefill(r.text.input_ids)[0].next_logits, r.text.prefill.next_logits)
            else "passes differ"
        ),
    ),
    row(
        "7.2",
        "unlisted-below-third",
        "夹具还规定未列项均低于表中第三名 (step 1: 14, 15, 17)",
        [14, 15, 17],
        "the IDs whose step-1 raw logit is at least the third's (1.10)",
        lambda r: [int(i) for i in np.flatnonzero(r.text.steps[0].raw_logits >= r.text.steps[0].raw_logits[17])],
    ),
    # ---------------------------------------------------------------- §7.3 request to first token
    row(
        "7.3",
        "rendered",
        "模板渲染为 <bos><system>简洁回答</system><user>天空为什么是蓝色？</user><assistant>",
        RENDERED,
        "the run's rendered context",
        lambda r: r.text.rendered_text,
    ),
    row(
        "7.3",
        "input_ids",
        "input_ids = [[1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6]]",
        [[1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6]],
        "the run's tokenizer output",
        lambda r: r.text.input_ids.tolist(),
    ),
    row(
        "7.3",
        "attention_mask",
        "attention_mask = [[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]",
        [[1] * 12],
        "e02 payload",
        lambda r: pay(r.te, "e02")["attention_mask"],
    ),
    row(
        "7.3",
        "position_ids",
        "position_ids = [[0, 1, …, 11]]",
        [list(range(12))],
        "e02 payload",
        lambda r: pay(r.te, "e02")["position_ids"],
    ),
    row("7.3", "m", "此时有效长度 m=12", 12, "e03 logical_length", lambda r: pay(r.te, "e03")["logical_length"]),
    row(
        "7.3",
        "e00",
        "e00 request.accepted gateway: request ID、模型不可变 ID",
        ("request.accepted", "gateway", True, "toy-decoder-v1"),
        "e00: type, component, request_id present, model_id",
        lambda r: (
            *typed(r.te, "e00"),
            bool(pay(r.te, "e00")["request_id"]),
            pay(r.te, "e00")["artifacts"]["model_id"],
        ),
    ),
    row(
        "7.3",
        "e01",
        "e01 context.rendered application: template v1、rendered byte length",
        ("context.rendered", "application", "v1", len(RENDERED.encode("utf-8"))),
        "e01: type, component, template version, byte length (the chapter's rendering, in UTF-8 bytes)",
        lambda r: (
            *typed(r.te, "e01"),
            version_suffix(pay(r.te, "e01")["artifacts"]["template_id"]),
            pay(r.te, "e01")["rendered_byte_length"],
        ),
    ),
    row(
        "7.3",
        "e02",
        "e02 input.tokenized tokenizer: 上述三张量、tokenizer v1",
        ("input.tokenized", "tokenizer", ["attention_mask", "input_ids", "position_ids"], "v1"),
        "e02: type, component, the tensors it carries, tokenizer version",
        lambda r: (
            *typed(r.te, "e02"),
            sorted(pay(r.te, "e02")["tensors"]),
            version_suffix(pay(r.te, "e02")["artifacts"]["tokenizer_id"]),
        ),
    ),
    row(
        "7.3",
        "e03",
        "e03 prefill.started scheduler: batch slot、logical length 12",
        ("prefill.started", "scheduler", True, 12),
        "e03: type, component, batch slot present, logical length",
        lambda r: (*typed(r.te, "e03"), "batch_slot" in pay(r.te, "e03"), pay(r.te, "e03")["logical_length"]),
    ),
    row(
        "7.3",
        "embedding",
        "embedding 输出形状是 [1,12,8]",
        [1, 12, 8],
        "the prefill's embedding shape",
        lambda r: r.text.prefill.embedding_shape,
    ),
    row(
        "7.3",
        "ledger-residual-in",
        "residual in: [1,12,8] | [1,12,8]",
        [[1, 12, 8]] * 2,
        "e04's per-layer ledger",
        lambda r: ledger(r, "e04", "residual_in"),
    ),
    row(
        "7.3",
        "ledger-Q",
        "Q: [1,2,12,4] | [1,2,12,4]",
        [[1, 2, 12, 4]] * 2,
        "e04's per-layer ledger",
        lambda r: ledger(r, "e04", "Q"),
    ),
    row(
        "7.3",
        "ledger-K/V",
        "K/V: 各 [1,1,12,4] | 各 [1,1,12,4]",
        [[[1, 1, 12, 4]] * 2] * 2,
        "e04's per-layer ledger, K and V",
        lambda r: [list(p) for p in zip(ledger(r, "e04", "K"), ledger(r, "e04", "V"), strict=True)],
    ),
    row(
        "7.3",
        "ledger-score",
        "score（逻辑形状）: [1,2,12,12] | [1,2,12,12]",
        [[1, 2, 12, 12]] * 2,
        "e04's per-layer ledger",
        lambda r: ledger(r, "e04", "score"),
    ),
    row(
        "7.3",
        "ledger-residual-out",
        "residual out: [1,12,8] | [1,12,8]",
        [[1, 12, 8]] * 2,
        "e04's per-layer ledger",
        lambda r: ledger(r, "e04", "residual_out"),
    ),
    row(
        "7.3",
        "cache-layer-0",
        "layer 0: K[1,1,12,4], V[1,1,12,4], positions 0..11",
        {"layer": 0, "K": [1, 1, 12, 4], "V": [1, 1, 12, 4], "positions": [0, 11]},
        "e04's cache record, layer 0",
        lambda r: pay(r.te, "e04")["cache"][0],
    ),
    row(
        "7.3",
        "cache-layer-1",
        "layer 1: K[1,1,12,4], V[1,1,12,4], positions 0..11",
        {"layer": 1, "K": [1, 1, 12, 4], "V": [1, 1, 12, 4], "positions": [0, 11]},
        "e04's cache record, layer 1",
        lambda r: pay(r.te, "e04")["cache"][1],
    ),
    row(
        "7.3",
        "next_logits",
        "next_logits: [1,20]",
        [1, 20],
        "the prefill's next_logits array",
        lambda r: list(r.text.prefill.next_logits.shape),
    ),
    row(
        "7.3",
        "top3-ids",
        "首步原始 logits 的前三名: 14, 15, 17",
        [14, 15, 17],
        "argsort of step 1's raw logits",
        lambda r: [int(i) for i in np.argsort(-r.text.steps[0].raw_logits)[:3]],
    ),
    row(
        "7.3",
        "logit-14",
        "14 短波蓝光 4.20",
        4.20,
        "step 1's raw logit of ID 14",
        lambda r: r.text.steps[0].raw_logits[14],
        tol=LOGIT,
    ),
    row(
        "7.3",
        "logit-15",
        "15 的散射 3.80",
        3.80,
        "step 1's raw logit of ID 15",
        lambda r: r.text.steps[0].raw_logits[15],
        tol=LOGIT,
    ),
    row(
        "7.3",
        "logit-17",
        "17 。 1.10",
        1.10,
        "step 1's raw logit of ID 17",
        lambda r: r.text.steps[0].raw_logits[17],
        tol=LOGIT,
    ),
    row(
        "7.3",
        "control-mask",
        "控制 mask 禁止 0、1、2、3、4、5、6、19",
        [0, 1, 2, 3, 4, 5, 6, 19],
        "control_token_mask alone on step 1's raw logits: the IDs set to −∞",
        lambda r: [
            int(i)
            for i in np.flatnonzero(
                np.isneginf(control_token_mask(r.text.steps[0].raw_logits, ProcessorContext(r.text.config.sampling)))
            )
        ],
    ),
    row(
        "7.3",
        "min-length-mask",
        "minimum-length mask 暂时禁止 EOS 18",
        [[18], []],
        "minimum_length_eos_mask alone, before the first selection and after it",
        lambda r: [
            [
                int(i)
                for i in np.flatnonzero(
                    np.isneginf(
                        minimum_length_eos_mask(
                            r.text.steps[0].raw_logits, ProcessorContext(r.text.config.sampling, before)
                        )
                    )
                )
            ]
            for before in ((), (14,))
        ],
    ),
    row(
        "7.3",
        "others-keep-top3",
        "其余处理器不改变前三名",
        [4.20, 3.80, 1.10],
        "step 1's processed logits of 14, 15, 17",
        lambda r: r.text.steps[0].processed_logits[[14, 15, 17]],
        tol=LOGIT,
    ),
    row("7.3", "greedy-selects-14", "greedy 选择 14", 14, "step 1's selection", lambda r: r.text.steps[0].selected),
    row(
        "7.3",
        "e04",
        "e04 prefill.completed model: cache length 12、raw logits [1,20]",
        ("prefill.completed", "model", 12, [1, 20]),
        "e04: type, component, cache length, raw logits shape",
        lambda r: (
            *typed(r.te, "e04"),
            pay(r.te, "e04")["cache_length"],
            pay(r.te, "e04")["tensors"]["raw_logits"]["shape"],
        ),
    ),
    row(
        "7.3",
        "e05",
        "e05 token.selected decoder: step 1、ID 14、greedy argmax",
        ("token.selected", "decoder", 1, 14, "greedy argmax"),
        "e05: type, component, step, token ID, reason (labkit's identifier greedy_argmax, read with a space)",
        lambda r: (
            *typed(r.te, "e05"),
            pay(r.te, "e05")["step"],
            pay(r.te, "e05")["token_id"],
            pay(r.te, "e05")["reason"].replace("_", " "),
        ),
    ),
    row(
        "7.3",
        "e06",
        "e06 stream.delta transport",
        ("stream.delta", "transport"),
        "e06: type and component",
        lambda r: typed(r.te, "e06"),
    ),
    row(
        "7.3",
        "step-start-convention",
        "e05 后、第一次 decode 前，已选输出数是 1，cache 仍长 12",
        [1, 12],
        "token.selected events before e07, and e07's cache length",
        lambda r: [
            sum(e["event_type"] == "token.selected" for e in r.text.events[:7]),
            pay(r.te, "e07")["cache_length"],
        ],
    ),
    # ---------------------------------------------------------------- §7.4 token by token
    row(
        "7.4",
        "first-decode-input",
        "token 14 作为位置 12 的新输入",
        [14, 12],
        "e07: consuming, position",
        lambda r: [pay(r.te, "e07")["consuming"], pay(r.te, "e07")["position"]],
    ),
    row(
        "7.4",
        "decode-Q",
        "每层新 Q 为 [1,2,1,4]",
        [[1, 2, 1, 4]] * 2,
        "e08's per-layer ledger",
        lambda r: ledger(r, "e08", "Q"),
    ),
    row(
        "7.4",
        "decode-K/V",
        "新 K/V 各为 [1,1,1,4]",
        [[[1, 1, 1, 4]] * 2] * 2,
        "e08's per-layer ledger, K and V",
        lambda r: [list(p) for p in zip(ledger(r, "e08", "K"), ledger(r, "e08", "V"), strict=True)],
    ),
    row(
        "7.4",
        "decode-score",
        "逻辑 score 为 [1,2,1,13]",
        [[1, 2, 1, 13]] * 2,
        "e08's per-layer ledger",
        lambda r: ledger(r, "e08", "score"),
    ),
    row(
        "7.4",
        "decode-cache-13",
        "完成后 cache 长 13",
        [13, [13, 13]],
        "e08: new cache length and each layer's",
        lambda r: [pay(r.te, "e08")["new_cache_length"], pay(r.te, "e08")["cache_lengths"]],
    ),
    *[
        row(
            "7.4",
            f"ledger-step-{t}",
            f"{t} | {start} | {top} | {sel} {piece} | {'是' if dec else '否'} | {after}",
            [start, top, sel, piece, dec, after],
            "step t: cache at start, raw argmax, selection, its piece, decoded?, each layer's cache after",
            lambda r, t=t: (
                lambda s: [
                    s.cache_at_start,
                    int(np.argmax(s.raw_logits)),
                    s.selected,
                    r.text.tokenizer.pieces[s.selected],
                    s.cache_after is not None,
                    {*(s.cache_after or [s.cache_at_start])}.pop(),
                ]
            )(r.text.steps[t - 1]),
        )
        for t, start, top, sel, piece, dec, after in [
            (1, 12, 14, 14, "短波蓝光", True, 13),
            (2, 13, 15, 15, "的散射", True, 14),
            (3, 14, 16, 16, "通常更强", True, 15),
            (4, 15, 17, 17, "。", True, 16),
            (5, 16, 18, 18, "EOS", False, 16),
        ]
    ],
    *[
        row(
            "7.4",
            f"ledger-logit-{t}",
            f"{t} | raw top-1 {top} | logit {value:.2f}",
            value,
            "step t's raw logit of its top-1 ID",
            lambda r, t=t, top=top: r.text.steps[t - 1].raw_logits[top],
            tol=LOGIT,
        )
        for t, top, value in [(1, 14, 4.20), (2, 15, 5.00), (3, 16, 4.70), (4, 17, 5.30), (5, 18, 6.00)]
    ],
    *[
        row(
            "7.4",
            f"event-pattern-step-{t}",
            "token.selected(step=t), stream.delta(sequence_no=t-1), decode.started(consuming=y_t, "
            "position=cache_length), decode.completed(new_cache_length=cache_length+1)",
            [
                ("token.selected", t),
                ("stream.delta", t - 1),
                ("decode.started", y, 11 + t),
                ("decode.completed", 12 + t),
            ],
            "the events selection step t made, with those payload values",
            lambda r, t=t: decode_events(r, t),
        )
        for t, y in [(1, 14), (2, 15), (3, 16), (4, 17)]
    ],
    row(
        "7.4",
        "eos-ends-at-once",
        "EOS 被选择后直接终止，不显示，也不为再下一步建立 cache",
        [("token.selected", 5)],
        "the events selection step 5 made",
        lambda r: decode_events(r, 5),
    ),
    row(
        "7.4",
        "returned-text",
        "最终返回：短波蓝光的散射通常更强。",
        "短波蓝光的散射通常更强。",
        "e23's returned UTF-8 bytes, decoded",
        lambda r: bytes.fromhex(pay(r.te, "e23")["utf8_hex"]).decode("utf-8"),
    ),
    row(
        "7.4",
        "e21",
        "e21 token.selected(step=5, id=18)",
        ["e21", "token.selected", 5, 18],
        "the run's event e21",
        lambda r: ["e21", r.te["e21"]["event_type"], pay(r.te, "e21")["step"], pay(r.te, "e21")["token_id"]],
    ),
    row(
        "7.4",
        "e22",
        "e22 generation.draining(finish_reason=eos)",
        ["generation.draining", "eos"],
        "the run's event e22",
        lambda r: [r.te["e22"]["event_type"], pay(r.te, "e22")["finish_reason"]],
    ),
    row(
        "7.4",
        "e23",
        "e23 response.completed(sequence_no=4, output_tokens_selected=5, output_tokens_returned=4)",
        ["response.completed", 4, 5, 4],
        "the run's event e23",
        lambda r: [
            r.te["e23"]["event_type"],
            *(pay(r.te, "e23")[k] for k in ("sequence_no", "output_tokens_selected", "output_tokens_returned")),
        ],
    ),
    row(
        "7.4",
        "e24",
        "e24 resources.released(cache_final_length=16)",
        ["resources.released", 16, [16, 16]],
        "the run's event e24 and each layer's final cache length",
        lambda r: [
            r.te["e24"]["event_type"],
            pay(r.te, "e24")["cache_final_length"],
            pay(r.te, "e24")["cache_lengths"],
        ],
    ),
    # ---------------------------------------------------------------- §7.5 the reproduction assertions
    row(
        "7.5",
        "2-prefill-cache-12",
        "2. 两层 prefill cache 逻辑长度均为 12",
        [12, 12],
        "the length axis of each layer's prefill cache",
        lambda r: [layer.cache_k[2] for layer in r.text.prefill.layers],
    ),
    row(
        "7.5",
        "3-first-top1",
        "3. 首步原始 top-1 为 ID 14",
        14,
        "argmax of step 1's raw logits",
        lambda r: int(np.argmax(r.text.steps[0].raw_logits)),
    ),
    row(
        "7.5",
        "4-selections",
        "4. 选择序列恰为 [14,15,16,17,18]",
        [14, 15, 16, 17, 18],
        "the run's selections",
        lambda r: [s.selected for s in r.text.steps],
    ),
    row(
        "7.5",
        "5-cache-grows-by-1",
        "5. 每个非 EOS token 使所有层 cache 增长 1",
        [[1, 1]] * 4,
        "each non-EOS step: each layer's cache after minus the cache at start",
        lambda r: [[n - s.cache_at_start for n in s.cache_after] for s in r.text.steps if s.selected != 18],
    ),
    row(
        "7.5",
        "6-eos-not-returned",
        "6. EOS 不进入返回文本",
        [14, 15, 16, 17],
        "the token IDs the stream deltas carry",
        lambda r: [e["payload"]["token_id"] for e in r.text.events if e["event_type"] == "stream.delta"],
    ),
    row(
        "7.5",
        "8-released-once",
        "8. 最终状态只出现一次 FINISHED，资源释放一次",
        1,
        "resources.released events in the run",
        lambda r: sum(e["event_type"] == "resources.released" for e in r.text.events),
    ),
    # §7.5's three diagnosis rules, on the faults that match their premise
    row(
        "7.5",
        "diagnose-logits",
        "若输入 IDs 相同但 e04 logits 已不同，检查模型/数值路径",
        [True, "e04", "模型/数值路径"],
        "the perturbed_weight run against trace one: e02's IDs equal?, the first divergence, its suspect",
        lambda r: diagnosis(
            r, "perturbed_weight", lambda a, b: a["e02"]["payload"]["input_ids"] == b["e02"]["payload"]["input_ids"]
        ),
    ),
    row(
        "7.5",
        "diagnose-selection",
        "若 raw logits 相同而选择不同，检查处理器与 tie-break",
        [True, "e05", "处理器与 tie-break"],
        "the eos_in_control_mask run: raw logits equal at every step while the selections differ?, the first "
        "divergence, its suspect",
        lambda r: diagnosis(r, "eos_in_control_mask", logits_equal_selection_differs),
    ),
    row(
        "7.5",
        "diagnose-bytes",
        "若 token 相同而字节不同，检查 tokenizer decoder 与 transport",
        [True, "e06", "tokenizer decoder 与 transport"],
        "the broken_detokenizer run: e06 the same token with other bytes?, the first divergence, its suspect",
        lambda r: diagnosis(
            r,
            "broken_detokenizer",
            lambda a, b: (
                a["e06"]["payload"]["token_id"] == b["e06"]["payload"]["token_id"]
                and a["e06"]["payload"]["utf8_hex"] != b["e06"]["payload"]["utf8_hex"]
            ),
        ),
    ),
    # ---------------------------------------------------------------- §7.6 trace two's artifacts
    row(
        "7.6",
        "prompt",
        "雨夜车站，一把留在长椅上的红伞，纪实摄影。",
        "雨夜车站，一把留在长椅上的红伞，纪实摄影。",
        "d00's prompt",
        lambda r: pay(r.de, "d00")["prompt"],
    ),
    row(
        "7.6",
        "text_encoder_id",
        "text_encoder_id = toy-text-encoder-v2",
        "toy-text-encoder-v2",
        "d00 artifacts",
        lambda r: pay(r.de, "d00")["artifacts"]["text_encoder_id"],
    ),
    row(
        "7.6",
        "denoiser_id",
        "denoiser_id = toy-latent-denoiser-v3",
        "toy-latent-denoiser-v3",
        "d02–d05 artifacts (one value)",
        lambda r: {pay(r.de, f"d0{i}")["artifacts"]["denoiser_id"] for i in range(2, 6)}.pop(),
    ),
    row(
        "7.6",
        "vae_id",
        "vae_id = toy-vae-v1",
        "toy-vae-v1",
        "d06 artifacts",
        lambda r: pay(r.de, "d06")["artifacts"]["vae_id"],
    ),
    row(
        "7.6",
        "prediction_type",
        "prediction_type = epsilon",
        "epsilon",
        "d01 scheduler record",
        lambda r: pay(r.de, "d01")["scheduler"]["prediction_type"],
    ),
    row(
        "7.6",
        "latent_shape",
        "latent_shape = [1,4,64,64]",
        [1, 4, 64, 64],
        "the run's initial latent array",
        lambda r: list(r.diffusion.latents[0][1].shape),
    ),
    row(
        "7.6",
        "latent_dtype",
        "latent_dtype = float32",
        "float32",
        "the run's initial latent array",
        lambda r: str(r.diffusion.latents[0][1].dtype),
    ),
    row(
        "7.6",
        "image_shape",
        "image_shape = [1,3,512,512]",
        [1, 3, 512, 512],
        "the run's decoded pixel array",
        lambda r: list(r.diffusion.pixels.shape),
    ),
    row(
        "7.6",
        "timesteps",
        "timesteps = [999,749,499,249]",
        [999, 749, 499, 249],
        "the timesteps of d02–d05",
        lambda r: [pay(r.de, f"d0{i}")["timestep"] for i in range(2, 6)],
    ),
    row(
        "7.6",
        "sampler",
        "sampler = ddim-v1",
        "ddim-v1",
        "d01 artifacts",
        lambda r: pay(r.de, "d01")["artifacts"]["sampler"],
    ),
    row(
        "7.6",
        "eta",
        "eta = 0",
        [0.0, [0.0] * 4],
        "d01's η and each step's σ",
        lambda r: [pay(r.de, "d01")["scheduler"]["eta"], [pay(r.de, f"d0{i}")["sigma"] for i in range(2, 6)]],
    ),
    row(
        "7.6",
        "guidance_scale",
        "guidance_scale = 5.0",
        5.0,
        "d02–d05 (one value)",
        lambda r: {pay(r.de, f"d0{i}")["guidance_scale"] for i in range(2, 6)}.pop(),
    ),
    row("7.6", "seed", "seed = 314159", 314159, "d01 seed", lambda r: pay(r.de, "d01")["seed"]),
    row(
        "7.6",
        "prng",
        "prng = Philox4x32-10",
        "Philox4x32-10",
        "d01 artifacts",
        lambda r: pay(r.de, "d01")["artifacts"]["prng"],
    ),
    row(
        "7.6",
        "normal_transform",
        "normal_transform = box-muller-v1",
        "box-muller-v1",
        "d01 artifacts",
        lambda r: pay(r.de, "d01")["artifacts"]["normal_transform"],
    ),
    row(
        "7.6",
        "negative_prompt",
        'negative_prompt = ""',
        "",
        "d00's negative prompt",
        lambda r: pay(r.de, "d00")["negative_prompt"],
    ),
    row(
        "7.6",
        "counter-0",
        "初始潜变量由 seed、PRNG、counter 0 和 normal transform 唯一生成",
        [0, 1 * 4 * 64 * 64],
        "d01: the counter before the draw, and the normals drawn (one per latent element)",
        lambda r: [pay(r.de, "d01")["rng"]["counter_before"], pay(r.de, "d01")["normals_drawn"]],
    ),
    row(
        "7.6",
        "latent-from-seed",
        "初始潜变量由 seed、PRNG、counter 0 和 normal transform 唯一生成",
        "reproduced",
        "Philox4x32-10 + Box–Muller from seed 314159, counter 0, drawn again: equal to the run's z_999",
        lambda r: (
            "reproduced"
            if np.array_equal(
                PhiloxNormalStream(314159, 0).normals(4 * 64 * 64).values.reshape(1, 4, 64, 64).astype(np.float32),
                r.diffusion.latents[0][1],
            )
            else "differs"
        ),
    ),
    # ---------------------------------------------------------------- §7.7 conditions, denoising, pixels
    row(
        "7.7",
        "text-ids-12",
        "文本 tokenizer 得到长度 12 的 ID 序列 (text IDs [1,12])",
        [1, 12],
        "the positive prompt's ID row of the run",
        lambda r: [1, len(r.diffusion.input_ids[1])],
    ),
    row(
        "7.7",
        "c_pos",
        "conditional_embedding c_pos: [1,12,768]",
        [1, 12, 768],
        "d00 tensors",
        lambda r: pay(r.de, "d00")["tensors"]["c_pos"]["shape"],
    ),
    row(
        "7.7",
        "c_neg",
        "unconditional_embedding c_neg: [1,12,768]",
        [1, 12, 768],
        "d00 tensors",
        lambda r: pay(r.de, "d00")["tensors"]["c_neg"]["shape"],
    ),
    row(
        "7.7",
        "z_999",
        "初始状态为 z_999，形状 [1,4,64,64]",
        ["z_999", [1, 4, 64, 64]],
        "d01 tensors",
        lambda r: [(k := next(iter(pay(r.de, "d01")["tensors"]))), pay(r.de, "d01")["tensors"][k]["shape"]],
    ),
    row(
        "7.7",
        "latent_batch",
        "latent_batch: [2,4,64,64]  # same z_t duplicated",
        [[2, 4, 64, 64], True],
        "d02's latent batch shape; its summary equals z_999's (the same latent twice)",
        lambda r: [
            pay(r.de, "d02")["batch"]["latent_batch"],
            pay(r.de, "d02")["tensors"]["latent_batch"]["summary"] == pay(r.de, "d01")["tensors"]["z_999"]["summary"],
        ],
    ),
    row(
        "7.7",
        "condition_batch",
        "condition_batch: [2,12,768]  # c_neg followed by c_pos",
        [[2, 12, 768], ["c_neg", "c_pos"]],
        "the run's condition batch; which encoding (of '' or of the prompt) each row equals",
        lambda r: [
            list(r.diffusion.condition_batch.shape),
            [
                {True: "c_neg", False: "c_pos"}[np.array_equal(row_, load_text_encoder().encode("")[1][0])]
                for row_ in r.diffusion.condition_batch
            ],
        ],
    ),
    row(
        "7.7",
        "timestep_batch",
        "timestep_batch: [2]",
        [[2]] * 4,
        "the shape of each step's timestep batch",
        lambda r: [[len(pay(r.de, f"d0{i}")["batch"]["timestep_batch"])] for i in range(2, 6)],
    ),
    row(
        "7.7",
        "epsilon_batch",
        "epsilon_batch: [2,4,64,64]",
        [[2, 4, 64, 64]] * 4,
        "each step's ε batch",
        lambda r: [pay(r.de, f"d0{i}")["tensors"]["epsilon_batch"]["shape"] for i in range(2, 6)],
    ),
    row(
        "7.7",
        "cfg-formula",
        "ε̂ = ε_neg + 5.0(ε_pos − ε_neg)",
        0.0,
        "largest |ε̂ of the run − (ε_neg + 5.0(ε_pos − ε_neg))| over the four steps, ε_neg/ε_pos the "
        "rows of each step's network output (recorded by a combine hook in a second run)",
        lambda r: max(
            float(np.max(np.abs(guided - (b[0:1] + 5.0 * (b[1:2] - b[0:1])))))
            for guided, b in zip(r.diffusion.epsilon_guided, r.captured_cfg, strict=True)
        ),
        tol=1e-6,
    ),
    row(
        "7.7",
        "whole-latent-replaced",
        "DDIM scheduler 更新整个 [1,4,64,64] 潜变量；每个 denoise step 都替换整个潜状态",
        [[1, 4, 64, 64]] * 4,
        "the shape of each step's new latent",
        lambda r: [list(z.shape) for _, z in r.diffusion.latents[1:]],
    ),
    row(
        "7.7",
        "d00",
        "d00 condition.encoded: text IDs [1,12] → embeddings [2,12,768]",
        ["condition.encoded", [1, 12], [2, 12, 768]],
        "d00: type, prompt IDs, condition batch shape",
        lambda r: [
            r.de["d00"]["event_type"],
            [1, len(pay(r.de, "d00")["input_ids"])],
            pay(r.de, "d00")["tensors"]["condition_batch"]["shape"],
        ],
    ),
    row(
        "7.7",
        "d01",
        "d01 latent.initialized: seed/counter → z_999",
        ["latent.initialized", True, ["z_999"]],
        "d01: type, seed and counter recorded, the latent it outputs",
        lambda r: [
            r.de["d01"]["event_type"],
            "seed" in pay(r.de, "d01") and "rng" in pay(r.de, "d01"),
            sorted(pay(r.de, "d01")["tensors"]),
        ],
    ),
    *[
        row(
            "7.7",
            event_id,
            f"{event_id} denoise.updated: z_{t},{t} → ε [2,4,64,64] → z_{nxt}",
            ["denoise.updated", t, [2, 4, 64, 64], f"z_{nxt}"],
            "the event: type, timestep, ε batch shape, the latent it outputs",
            lambda r, e=event_id: [
                r.de[e]["event_type"],
                pay(r.de, e)["timestep"],
                pay(r.de, e)["tensors"]["epsilon_batch"]["shape"],
                [k for k in pay(r.de, e)["tensors"] if k.startswith("z_")][-1],
            ],
        )
        for event_id, t, nxt in [("d02", 999, 749), ("d03", 749, 499), ("d04", 499, 249), ("d05", 249, 0)]
    ],
    row(
        "7.7",
        "d06",
        "d06 vae.decoded: z_0 [1,4,64,64] → pixels [1,3,512,512]",
        ["vae.decoded", [1, 4, 64, 64], [1, 3, 512, 512]],
        "d06: type, its z_0 and pixel shapes",
        lambda r: [
            r.de["d06"]["event_type"],
            pay(r.de, "d06")["tensors"]["z_0"]["shape"],
            pay(r.de, "d06")["tensors"]["pixels"]["shape"],
        ],
    ),
    row(
        "7.7",
        "d07",
        "d07 image.encoded: postprocessed pixels → PNG bytes → result object",
        ["image.encoded", "PNG bytes", "result object"],
        "d07: type; the run's bytes start with the PNG signature; a result with an image ID",
        lambda r: [
            r.de["d07"]["event_type"],
            "PNG bytes" if r.diffusion.png.startswith(b"\x89PNG\r\n\x1a\n") else "other bytes",
            "result object" if pay(r.de, "d07")["commit"]["result"].get("image_id") else "none",
        ],
    ),
    row(
        "7.7",
        "preview-replace-frame",
        "流协议应使用 replace-frame 或带 step ID 的对象",
        [["replace-frame", True]] * 4,
        "each step's preview: mode, and whether it names its step",
        lambda r: [
            [
                pay(r.de, f"d0{i}")["preview"]["mode"],
                pay(r.de, f"d0{i}")["preview"]["step_id"] == pay(r.de, f"d0{i}")["step_id"],
            ]
            for i in range(2, 6)
        ],
    ),
    row(
        "7.7",
        "d00-d08-order",
        "d00 condition.encoded … d08 response.completed (the §7.7 table, in order)",
        [
            ["d00", "condition.encoded"],
            ["d01", "latent.initialized"],
            ["d02", "denoise.updated"],
            ["d03", "denoise.updated"],
            ["d04", "denoise.updated"],
            ["d05", "denoise.updated"],
            ["d06", "vae.decoded"],
            ["d07", "image.encoded"],
            ["d08", "response.completed"],
        ],
        "the run's event IDs and types, in order",
        lambda r: [[e["event_id"], e["event_type"]] for e in r.diffusion.events],
    ),
    # ---------------------------------------------------------------- §7.8 the 2-D DDIM kernel
    row(
        "7.8",
        "alpha_bar",
        "alpha_bar[2] = 0.25, alpha_bar[1] = 0.64, alpha_bar[0] = 1.00",
        {"2": 0.25, "1": 0.64, "0": 1.00},
        "labkit's sub-fixture file",
        lambda r: r.ddim_2d["fixture"]["alpha_bar"],
    ),
    row(
        "7.8",
        "z_2",
        "z_2 = (1.0, -1.0)",
        [1.0, -1.0],
        "labkit's sub-fixture file",
        lambda r: r.ddim_2d["fixture"]["z_2"],
    ),
    row(
        "7.8",
        "epsilon_2",
        "epsilon_2 = (0.2, -0.1)",
        [0.2, -0.1],
        "labkit's sub-fixture file",
        lambda r: r.ddim_2d["fixture"]["epsilon_2"],
    ),
    row(
        "7.8",
        "epsilon_1",
        "epsilon_1 = (0.1, -0.2)",
        [0.1, -0.2],
        "labkit's sub-fixture file",
        lambda r: r.ddim_2d["fixture"]["epsilon_1"],
    ),
    row("7.8", "sigma", "sigma = 0", 0.0, "the sub-fixture's η", lambda r: r.ddim_2d["fixture"]["eta"]),
    row(
        "7.8",
        "x0_hat_2",
        "x̂_0^(2) ≈ (1.653590, -1.826795)",
        [1.653590, -1.826795],
        "ddim_step(z_2, ε_2, 0.25, 0.64): its x̂₀",
        lambda r: r.ddim_2d["x0_hat_2"],
        tol=SIX_DECIMALS,
    ),
    row(
        "7.8",
        "z_1",
        "z_1 = 0.8 x̂_0^(2) + 0.6 ε_2 ≈ (1.442872, -1.521436)",
        [1.442872, -1.521436],
        "ddim_step(z_2, ε_2, 0.25, 0.64): its z_prev",
        lambda r: r.ddim_2d["z_1"],
        tol=SIX_DECIMALS,
    ),
    row(
        "7.8",
        "x0_hat_1",
        "x̂_0^(1) ≈ (1.728590, -1.751795)",
        [1.728590, -1.751795],
        "ddim_step(z_1, ε_1, 0.64, 1.00): its x̂₀",
        lambda r: r.ddim_2d["x0_hat_1"],
        tol=SIX_DECIMALS,
    ),
    row(
        "7.8",
        "z_0",
        "因为 ᾱ_0=1，最终 z_0 = x̂_0^(1)",
        [1.728590, -1.751795],
        "ddim_step(z_1, ε_1, 0.64, 1.00): its z_prev",
        lambda r: r.ddim_2d["z_0"],
        tol=SIX_DECIMALS,
    ),
    row(
        "7.8",
        "trace-two-z0-is-x0",
        "ᾱ_0 = 1: the last step's z_0 is its x̂₀ (trace two's d05)",
        [1.0, 0.0],
        "d05's ᾱ_prev, and the largest |z_0 − x̂₀| of the run's last step",
        lambda r: [
            pay(r.de, "d05")["alpha_bar_prev"],
            float(np.max(np.abs(r.diffusion.latents[-1][1] - r.diffusion.x0_hats[-1]))),
        ],
        tol=1e-6,
    ),
    # ---------------------------------------------------------------- §7.9 trace two's assertions
    row(
        "7.9",
        "1-same-conditions",
        "1. 文本、negative prompt 与编码器版本产生相同条件张量",
        "equal",
        "toy-text-encoder-v2 encodes '' and the prompt again: equal to the run's condition batch",
        lambda r: (
            "equal"
            if np.array_equal(
                np.concatenate([load_text_encoder().encode(t)[1] for t in ("", pay(r.de, "d00")["prompt"])]),
                r.diffusion.condition_batch,
            )
            else "differs"
        ),
    ),
    row(
        "7.9",
        "3-cfg-order",
        "3. CFG batch 顺序固定为 negative 后 positive",
        [["negative", "positive"]] * 5,
        "d00's batch order and each step's condition rows",
        lambda r: [
            pay(r.de, "d00")["cfg_batch_order"],
            *(pay(r.de, f"d0{i}")["batch"]["condition_rows"] for i in range(2, 6)),
        ],
    ),
    row(
        "7.9",
        "5-output-matches-latent",
        "5. 每步 model output 与 latent shape 匹配",
        [[1, 4, 64, 64]] * 4,
        "the shape of each step's guided ε",
        lambda r: [list(e.shape) for e in r.diffusion.epsilon_guided],
    ),
    row(
        "7.9",
        "6-no-extra-noise",
        "6. η=0 时 denoise loop 不额外消费高斯噪声",
        [0, 0, 0, 0],
        "each step's RNG counter after minus before",
        lambda r: [
            pay(r.de, f"d0{i}")["rng"]["counter_after"] - pay(r.de, f"d0{i}")["rng"]["counter_before"]
            for i in range(2, 6)
        ],
    ),
    row(
        "7.9",
        "8-levels",
        "8. 比较层级明确为 latent、pixel 或 PNG bytes",
        ["latent", "pixel", "png"],
        "the comparison levels of the run's tensor records",
        lambda r: levels(r.diffusion.events),
    ),
    row(
        "7.9",
        "other-text-encoding",
        "相同 seed 而……文本编码不同，不构成同一轨迹",
        ["不构成同一轨迹", "d00"],
        "first_divergence of the run's d00–d05 and a same-seed run with another prompt (and where it parts)",
        lambda r: same_trace(r.diffusion.events[:6], r.diffusion_variant(prompt="晴天车站，一把红伞。")),
    ),
    row(
        "7.9",
        "other-scheduler",
        "相同 seed 而 scheduler……不同，不构成同一轨迹",
        ["不构成同一轨迹", "d01"],
        "first_divergence of the run's d00–d05 and a same-seed run with leading timestep spacing (and where)",
        lambda r: same_trace(r.diffusion.events[:6], r.diffusion_variant(timestep_spacing="leading")),
    ),
    # ---------------------------------------------------------------- §7.10 request and ToolSpec
    row(
        "7.10",
        "clock",
        "clock = 2026-07-19T14:00:00+08:00",
        "2026-07-19T14:00:00+08:00",
        "t04's reference clock",
        lambda r: pay(r.tt, "t04")["reference_clock"],
    ),
    row(
        "7.10",
        "timezone",
        "timezone = Asia/Shanghai",
        "Asia/Shanghai",
        "t04's timezone",
        lambda r: pay(r.tt, "t04")["timezone"],
    ),
    row("7.10", "subject", "subject = user-42", "user-42", "t05's subject", lambda r: pay(r.tt, "t05")["subject"]),
    row(
        "7.10",
        "capabilities",
        "capabilities = [calendar.read, calendar.write:primary]",
        ["calendar.read", "calendar.write:primary"],
        "the run's configuration",
        lambda r: list(r.tool.config.capabilities),
    ),
    row(
        "7.10",
        "model_id",
        "model_id = toy-tool-decoder-v1",
        "toy-tool-decoder-v1",
        "t00 and t11 artifacts (one value)",
        lambda r: {pay(r.tt, e)["artifacts"]["model_id"] for e in ("t00", "t11")}.pop(),
    ),
    row(
        "7.10",
        "template_id",
        "template_id = toy-tool-template-v1",
        "toy-tool-template-v1",
        "t00 and t11 artifacts (one value)",
        lambda r: {pay(r.tt, e)["artifacts"]["template_id"] for e in ("t00", "t11")}.pop(),
    ),
    row(
        "7.10",
        "tokenizer_id",
        "tokenizer_id = toy-tool-tokenizer-v1",
        "toy-tool-tokenizer-v1",
        "t00 and t11 artifacts (one value)",
        lambda r: {pay(r.tt, e)["artifacts"]["tokenizer_id"] for e in ("t00", "t11")}.pop(),
    ),
    row("7.10", "L", "L = 2", 2, "layers in the stored weights", lambda r: len(r.tool_decoder.weights.layers)),
    row(
        "7.10",
        "d",
        "d = 16",
        16,
        "embedding width of the stored weights",
        lambda r: r.tool_decoder.weights.embedding.shape[1],
    ),
    row(
        "7.10",
        "H_q",
        "H_q = 4",
        4,
        "head axis of Q in mc_01's layer 0",
        lambda r: first_layer(r.tool.first_call)["Q"][1],
    ),
    row(
        "7.10",
        "H_kv",
        "H_kv = 2",
        2,
        "head axis of K in mc_01's layer 0",
        lambda r: first_layer(r.tool.first_call)["K"][1],
    ),
    row(
        "7.10",
        "d_h",
        "d_h = 4",
        4,
        "last axis of Q in mc_01's layer 0",
        lambda r: first_layer(r.tool.first_call)["Q"][3],
    ),
    row(
        "7.10",
        "vocabulary_size",
        "vocabulary_size = 256",
        256,
        "output head width of the stored weights",
        lambda r: r.tool_decoder.weights.output.shape[1],
    ),
    row(
        "7.10",
        "dtype",
        "dtype = float32",
        ["float32"],
        "dtypes of every stored weight and of mc_01's logits",
        lambda r: sorted(
            {str(a.dtype) for a in r.tool_decoder.weights.to_arrays().values()}
            | {str(r.tool.first_call.prefill.next_logits.dtype)}
        ),
    ),
    row(
        "7.10",
        "strategy-mc_01",
        "strategy = greedy_with_json_grammar (第一次模型调用)",
        "greedy_with_json_grammar",
        "t00's sampler",
        lambda r: pay(r.tt, "t00")["artifacts"]["sampler"],
    ),
    row(
        "7.10",
        "strategy-mc_02",
        "strategy = greedy_with_json_grammar (第二次模型调用)",
        "greedy_with_json_grammar",
        "t11's sampler",
        lambda r: pay(r.tt, "t11")["artifacts"]["sampler"],
        book=Departure("greedy_with_answer_slots", "09-tool-second-call.md", "Here the book departs\nfrom the chapter"),
    ),
    row(
        "7.10",
        "user-request",
        "明天上午九点提醒我带护照，提交前让我确认。",
        True,
        "mc_01's 86 input IDs, decoded, contain the request",
        lambda r: (
            "明天上午九点提醒我带护照，提交前让我确认。" in ToolTokenizer().decode(r.tool.first_call.input_ids[0])
        ),
    ),
    row(
        "7.10",
        "only-tool",
        "运行时只向模型提供 calendar.create_event@v1",
        "calendar.create_event@v1",
        "t00's tool version",
        lambda r: pay(r.tt, "t00")["artifacts"]["tool_version"],
    ),
    row(
        "7.10",
        "toolspec",
        "the ToolSpec JSON of §7.10",
        TOOLSPEC,
        "load_toolspec().to_json()",
        lambda r: load_toolspec().to_json(),
    ),
    # ---------------------------------------------------------------- §7.11 the first model call
    row(
        "7.11",
        "model_call_id",
        "model_call_id = mc_01",
        "mc_01",
        "the first call",
        lambda r: r.tool.first_call.model_call_id,
    ),
    row(
        "7.11",
        "input_token_count",
        "input_token_count = 86",
        86,
        "the first call's input IDs",
        lambda r: r.tool.first_call.input_ids.shape[1],
    ),
    row(
        "7.11",
        "input_ids_shape",
        "input_ids_shape = [1,86]",
        [1, 86],
        "the first call's input IDs",
        lambda r: list(r.tool.first_call.input_ids.shape),
    ),
    row(
        "7.11",
        "residual_shape",
        "residual_shape = [1,86,16]",
        [1, 86, 16],
        "the last layer's residual out",
        lambda r: r.tool.first_call.prefill.layers[-1].residual_out,
    ),
    row(
        "7.11",
        "per_layer_kv_shape",
        "per_layer_kv_shape = K/V [1,2,86,4]",
        [[[1, 2, 86, 4]] * 2] * 2,
        "each layer's prefill cache K and V",
        lambda r: [[layer.cache_k, layer.cache_v] for layer in r.tool.first_call.prefill.layers],
    ),
    row(
        "7.11",
        "raw_logits_shape",
        "raw_logits_shape = [1,256]",
        [1, 256],
        "the prefill's next logits",
        lambda r: list(r.tool.first_call.prefill.next_logits.shape),
    ),
    row(
        "7.11",
        "prefill_cache_length",
        "prefill_cache_length = 86",
        86,
        "t00 prefill cache length",
        lambda r: pay(r.tt, "t00")["prefill_cache_length"],
    ),
    row(
        "7.11",
        "finish_reason",
        "finish_reason = tool_proposal_complete",
        "tool_proposal_complete",
        "the first call's decode",
        lambda r: r.tool.first_call.decode.finish_reason,
    ),
    row(
        "7.11",
        "arguments",
        "原始 arguments bytes 解析为 {…}",
        ARGUMENTS,
        "the run's parsed arguments",
        lambda r: r.tool.arguments,
    ),
    row(
        "7.11",
        "no-calendar-event-yet",
        "到这里没有日历事件。状态仍是 PROPOSED。",
        ["PROPOSED", []],
        "t01's state; the events before t04 that carry a commit or a side effect",
        lambda r: [
            pay(r.tt, "t01")["state"],
            [e["event_id"] for e in r.tool.events[:4] if "commit" in e["payload"] or e["payload"].get("side_effect")],
        ],
    ),
    row(
        "7.11",
        "t00",
        "t00 model.started | model runtime | model call mc_01",
        ["model.started", "model runtime", "mc_01"],
        "the run's t00",
        lambda r: [*typed(r.tt, "t00"), pay(r.tt, "t00")["model_call_id"]],
    ),
    row(
        "7.11",
        "t01",
        "t01 proposal.generated | decoder | proposal p_01、27 tokens",
        ["proposal.generated", "decoder", "p_01", 27],
        "the run's t01",
        lambda r: [*typed(r.tt, "t01"), pay(r.tt, "t01")["proposal_id"], pay(r.tt, "t01")["generated_tokens"]],
    ),
    row(
        "7.11",
        "t02",
        "t02 proposal.parsed | JSON parser | PARSED",
        ["proposal.parsed", "JSON parser", "PARSED"],
        "the run's t02",
        lambda r: [*typed(r.tt, "t02"), pay(r.tt, "t02")["state"]],
    ),
    row(
        "7.11",
        "t03",
        "t03 schema.validated | validator | Draft 2020-12、VALIDATED",
        ["schema.validated", "validator", "Draft 2020-12", "VALIDATED"],
        "the run's t03",
        lambda r: [*typed(r.tt, "t03"), pay(r.tt, "t03")["validator"], pay(r.tt, "t03")["state"]],
    ),
    # ---------------------------------------------------------------- §7.12 normalise, authorise, confirm
    row(
        "7.12",
        "invocation",
        "the Invocation inv_01 of §7.12",
        CHAPTER_INVOCATION,
        "the run's Invocation",
        lambda r: asdict(r.tool.invocation),
    ),
    row(
        "7.12",
        "authorized-to-prepared",
        "状态从 AUTHORIZED 到 PREPARED，不进入执行",
        ["AUTHORIZED→PREPARED", "confirmation.requested"],
        "the transition after AUTHORIZED in t14's state history; the event that follows authorization",
        lambda r: [
            next(s for s in pay(r.tt, "t14")["state_history"] if s.startswith("AUTHORIZED")),
            r.tool.events[[e["event_type"] for e in r.tool.events].index("authorization.allowed") + 1]["event_type"],
        ],
    ),
    row(
        "7.12",
        "confirmation_id",
        "confirmation_id = confirm_01",
        "confirm_01",
        "the run's confirmation",
        lambda r: r.tool.confirmation.confirmation_id,
    ),
    row(
        "7.12",
        "confirmation-digest",
        "invocation_digest = H(canonical invocation inv_01)",
        digest(CHAPTER_INVOCATION),
        "the run's confirmation record",
        lambda r: r.tool.confirmation.invocation_digest,
    ),
    row(
        "7.12",
        "decision",
        "decision = approve",
        "approve",
        "the run's confirmation",
        lambda r: r.tool.confirmation.decision,
    ),
    row(
        "7.12",
        "t04",
        "t04 invocation.normalized | VALIDATED | reference clock、timezone",
        ["invocation.normalized", "VALIDATED", "2026-07-19T14:00:00+08:00", "Asia/Shanghai"],
        "the run's t04",
        lambda r: [r.tt["t04"]["event_type"], *(pay(r.tt, "t04")[k] for k in ("state", "reference_clock", "timezone"))],
    ),
    row(
        "7.12",
        "t05",
        "t05 authorization.allowed | AUTHORIZED | subject、capability、scope",
        ["authorization.allowed", "AUTHORIZED", "user-42", "calendar.write:primary", "user-42/primary"],
        "the run's t05",
        lambda r: [
            r.tt["t05"]["event_type"],
            *(pay(r.tt, "t05")[k] for k in ("state", "subject", "capability", "scope")),
        ],
    ),
    row(
        "7.12",
        "t06",
        "t06 confirmation.requested | PREPARED | invocation digest",
        ["confirmation.requested", "PREPARED", "inv_01"],
        "the run's t06 (its digest: test_chapter7_figures)",
        lambda r: [r.tt["t06"]["event_type"], pay(r.tt, "t06")["state"], pay(r.tt, "t06")["invocation_id"]],
    ),
    row(
        "7.12",
        "t07",
        "t07 confirmation.approved | PREPARED | matching digest",
        ["confirmation.approved", "PREPARED", digest(CHAPTER_INVOCATION), True],
        "the run's t07",
        lambda r: [
            r.tt["t07"]["event_type"],
            *(pay(r.tt, "t07")[k] for k in ("state", "invocation_digest", "digest_matches")),
        ],
    ),
    # ---------------------------------------------------------------- §7.13 execute and commit
    row(
        "7.13",
        "scope",
        "scope = user-42/primary",
        "user-42/primary",
        "t08's scope",
        lambda r: pay(r.tt, "t08")["scope"],
    ),
    row(
        "7.13",
        "tool_version",
        "tool_version = calendar.create_event@v1",
        "calendar.create_event@v1",
        "t08 artifacts",
        lambda r: pay(r.tt, "t08")["artifacts"]["tool_version"],
    ),
    row(
        "7.13",
        "key-at-the-service",
        "idempotency_key = req-42:create-event:1",
        [KEY, [KEY]],
        "the key t09's commit carries, and the keys under which the service stored an event",
        lambda r: [
            pay(r.tt, "t09")["commit"]["idempotency_key"],
            [rec["idempotency_key"] for rec in r.tool.service.store.values()],
        ],
    ),
    row(
        "7.13",
        "result",
        "第一次且唯一一次外部 attempt 返回 {status, event_id, committed_at, start}",
        RESULT,
        "the service's response, the chapter's four fields",
        lambda r: {k: r.tool.result.get(k) for k in RESULT},
    ),
    row(
        "7.13",
        "one-attempt",
        "第一次且唯一一次外部 attempt",
        [1, 1, 1],
        "invocation.started events, the service's requests and its executions",
        lambda r: [
            sum(e["event_type"] == "invocation.started" for e in r.tool.events),
            r.tool.service.requests,
            r.tool.service.executions,
        ],
    ),
    row(
        "7.13",
        "t08",
        "t08 invocation.started | EXECUTING",
        ["invocation.started", "EXECUTING"],
        "the run's t08",
        lambda r: [r.tt["t08"]["event_type"], pay(r.tt, "t08")["state"]],
    ),
    row(
        "7.13",
        "t08-side-effect",
        "t08 是否已有副作用：尚未确认",
        "尚未确认",
        "t08's side_effect in the chapter's words (True 是, False 否, anything else 尚未确认)",
        lambda r: side_effect_word(pay(r.tt, "t08")["side_effect"]),
        book=Departure(
            "否", "08-tool-proposal-to-commit.md", "At t08 the chapter says the side effect is *not yet confirmed*"
        ),
    ),
    row(
        "7.13",
        "t09",
        "t09 external.committed | COMMITTED | evt_6K2 已存在",
        ["external.committed", "COMMITTED", "evt_6K2", ["evt_6K2"]],
        "the run's t09 and the service's store",
        lambda r: [
            r.tt["t09"]["event_type"],
            pay(r.tt, "t09")["state"],
            pay(r.tt, "t09")["commit"]["event_id"],
            sorted(r.tool.service.store),
        ],
    ),
    row(
        "7.13",
        "t09-side-effect",
        "t09 是否已有副作用：是",
        "是",
        "t09's side_effect in the chapter's words",
        lambda r: side_effect_word(pay(r.tt, "t09")["side_effect"]),
    ),
    row(
        "7.13",
        "t10",
        "t10 result.encoded | OBSERVED",
        ["result.encoded", "OBSERVED"],
        "the run's t10",
        lambda r: [r.tt["t10"]["event_type"], pay(r.tt, "t10")["state"]],
    ),
    row(
        "7.13",
        "t10-side-effect",
        "t10 是否已有副作用：是",
        "是",
        "t10's side_effect in the chapter's words",
        lambda r: side_effect_word(pay(r.tt, "t10")["side_effect"]),
    ),
    row(
        "7.13",
        "t10-tool-message",
        "t10：结果已成为 tool message",
        {"tool_call_id": "p_01", **RESULT},
        "t10's tool message (the result's fields, and the call it answers)",
        lambda r: pay(r.tt, "t10")["tool_message"],
        book=Departure(
            {"tool_call_id": "p_01", **{k: v for k, v in RESULT.items() if k != "committed_at"}},
            "09-tool-second-call.md",
            "§7.13's result also holds `committed_at`, the service's own clock",
        ),
    ),
    row(
        "7.13",
        "cancel-after-commit",
        "若 t09 后收到取消……最终请求状态标为 cancelled-after-commit",
        ["cancelled-after-commit", ["evt_6K2"], "skipped", ["mc_01"]],
        "the cancel_after_commit run: request status, the calendar's events, the second call, the calls started",
        lambda r: [
            r.fault("cancel_after_commit").request_status,
            pay(r.fe("cancel_after_commit"), "t11")["commit"]["calendar_events"],
            pay(r.fe("cancel_after_commit"), "t10")["second_model_call"],
            [
                e["payload"]["model_call_id"]
                for e in r.fault("cancel_after_commit").events
                if e["event_type"] == "model.started"
            ],
        ],
    ),
    row(
        "7.13",
        "cancel-returns-event-id",
        "并返回可查询的 event ID 或恢复指引",
        ["evt_6K2", True],
        "the cancel run's request.cancelled event: the event ID and a guidance text",
        lambda r: [
            pay(r.fe("cancel_after_commit"), "t10")["commit"]["event_id"],
            bool(pay(r.fe("cancel_after_commit"), "t10")["guidance"]),
        ],
    ),
    # ---------------------------------------------------------------- §7.14 the second model call
    row(
        "7.14",
        "model_call_id",
        "model_call_id = mc_02",
        "mc_02",
        "the second call",
        lambda r: r.tool.second_call.model_call_id,
    ),
    row(
        "7.14",
        "input_token_count",
        "input_token_count = 132",
        132,
        "the second call's input IDs",
        lambda r: r.tool.second_call.input_ids.shape[1],
    ),
    row(
        "7.14",
        "input_ids_shape",
        "input_ids_shape = [1,132]",
        [1, 132],
        "the second call's input IDs",
        lambda r: list(r.tool.second_call.input_ids.shape),
    ),
    row(
        "7.14",
        "residual_shape",
        "residual_shape = [1,132,16]",
        [1, 132, 16],
        "the positions the last layer's cache holds and the residual width (t11 records it so)",
        lambda r: [
            1,
            r.tool.second_call.prefill.layers[-1].cache_k[2],
            r.tool.second_call.prefill.layers[-1].residual_out[2],
        ],
    ),
    row(
        "7.14",
        "per_layer_kv_shape",
        "per_layer_kv_shape = K/V [1,2,132,4]",
        [[[1, 2, 132, 4]] * 2] * 2,
        "each layer's cache K and V after the second prefill",
        lambda r: [[layer.cache_k, layer.cache_v] for layer in r.tool.second_call.prefill.layers],
    ),
    row(
        "7.14",
        "raw_logits_shape",
        "raw_logits_shape = [1,256]",
        [1, 256],
        "the second prefill's next logits",
        lambda r: list(r.tool.second_call.prefill.next_logits.shape),
    ),
    row(
        "7.14",
        "tool_call_id",
        "tool_call_id = p_01",
        "p_01",
        "t11, and the tool message it reads",
        lambda r: {pay(r.tt, "t11")["tool_call_id"], r.tool.tool_message["tool_call_id"]}.pop(),
    ),
    row(
        "7.14",
        "tool_result_status",
        "tool_result_status = ok",
        "ok",
        "t11, and the tool message it reads",
        lambda r: {pay(r.tt, "t11")["tool_result_status"], r.tool.tool_message["status"]}.pop(),
    ),
    row(
        "7.14",
        "tool_result_event_id",
        "tool_result_event_id = evt_6K2",
        "evt_6K2",
        "t11, and the tool message it reads",
        lambda r: {pay(r.tt, "t11")["tool_result_event_id"], r.tool.tool_message["event_id"]}.pop(),
    ),
    row(
        "7.14",
        "reused-prefix",
        "引擎可以复用与第一次调用完全相同的前缀 cache (86 tokens)",
        [86, True],
        "the tokens the second call reused; whether they are mc_01's 86 input IDs",
        lambda r: [
            r.tool.second_call.reused_prefix_tokens,
            np.array_equal(r.tool.second_call.input_ids[0, :86], r.tool.first_call.input_ids[0]),
        ],
    ),
    row(
        "7.14",
        "prefilled-rest",
        "新增的 assistant proposal 与 tool message 必须经过 prefill",
        132 - 86,
        "the tokens the second call prefilled",
        lambda r: r.tool.second_call.prefilled_tokens,
    ),
    row(
        "7.14",
        "answer",
        "第二次调用返回：已在 2026 年 7 月 20 日上午 9:00 创建“带护照”提醒。",
        ANSWER,
        "the second call's decoded text",
        lambda r: r.tool.second_call.decode.text,
    ),
    row(
        "7.14",
        "t11",
        "t11 model.started | model runtime | mc_02、132 input tokens",
        ["model.started", "model runtime", "mc_02", 132],
        "the run's t11",
        lambda r: [*typed(r.tt, "t11"), pay(r.tt, "t11")["model_call_id"], pay(r.tt, "t11")["input_token_count"]],
    ),
    row(
        "7.14",
        "t12",
        "t12 text.delta | transport | 有序自然语言片段",
        ["text.delta", "transport", ANSWER],
        "the run's t12: its deltas joined in order",
        lambda r: [*typed(r.tt, "t12"), "".join(pay(r.tt, "t12")["deltas"])],
    ),
    row(
        "7.14",
        "t13",
        "t13 response.completed | runtime | finish reason EOS",
        ["response.completed", "runtime", "EOS"],
        "the run's t13",
        lambda r: [*typed(r.tt, "t13"), pay(r.tt, "t13")["finish_reason"]],
    ),
    row(
        "7.14",
        "t14",
        "t14 trace.closed | tracing | external commit = true",
        ["trace.closed", "tracing", True],
        "the run's t14",
        lambda r: [*typed(r.tt, "t14"), pay(r.tt, "t14")["external_commit"]],
    ),
    row(
        "7.14",
        "side-effect-at-t09",
        "真正的日历副作用已经在 t09 发生，而不是在 t12",
        "t09",
        "the first event of the run with side_effect true",
        lambda r: next(e["event_id"] for e in r.tool.events if e["payload"].get("side_effect") is True),
    ),
    row(
        "7.14",
        "t00-t14-order",
        "t00 model.started … t14 trace.closed (the tables of §7.11–7.14, in order)",
        [
            ["t00", "model.started"],
            ["t01", "proposal.generated"],
            ["t02", "proposal.parsed"],
            ["t03", "schema.validated"],
            ["t04", "invocation.normalized"],
            ["t05", "authorization.allowed"],
            ["t06", "confirmation.requested"],
            ["t07", "confirmation.approved"],
            ["t08", "invocation.started"],
            ["t09", "external.committed"],
            ["t10", "result.encoded"],
            ["t11", "model.started"],
            ["t12", "text.delta"],
            ["t13", "response.completed"],
            ["t14", "trace.closed"],
        ],
        "the run's event IDs and types, in order",
        lambda r: [[e["event_id"], e["event_type"]] for e in r.tool.events],
    ),
    row(
        "7.14",
        "result-before-mc_02",
        "不能让模型在未看到结果时直接生成成功措辞",
        ["t10", "t11"],
        "the event that encodes the result, and the event that starts mc_02",
        lambda r: [
            next(e["event_id"] for e in r.tool.events if e["event_type"] == "result.encoded"),
            next(e["event_id"] for e in r.tool.events if e["payload"].get("model_call_id") == "mc_02"),
        ],
    ),
    # ---------------------------------------------------------------- §7.15 the four failure branches
    row(
        "7.15",
        "1-extra-field-not-executed",
        "1. 额外字段……不得授权或执行",
        [["schema.rejected", "trace.closed"], 0],
        "the extra_field run: event types from t03 on, the service's executions",
        lambda r: [
            [e["event_type"] for e in r.fault("extra_field").events[3:]],
            pay(r.fe("extra_field"), "t04")["commit"]["executions"],
        ],
    ),
    row(
        "7.15",
        "2-mismatch-rejected-at-t07",
        "2. 确认不匹配……在 t07 拒绝，必须重新确认",
        ["confirmation.rejected", "CONFIRMATION_REJECTED", False, "needs_new_confirmation"],
        "the confirmation_mismatch run: t07's type, state, digest match; the request status",
        lambda r: [
            r.fe("confirmation_mismatch")["t07"]["event_type"],
            *(pay(r.fe("confirmation_mismatch"), "t07")[k] for k in ("state", "digest_matches")),
            r.fault("confirmation_mismatch").request_status,
        ],
    ),
    row(
        "7.15",
        "2-mismatch-9-vs-10",
        "确认 digest 属于 9:00，Invocation 被改为 10:00",
        [digest(CHAPTER_INVOCATION), "2026-07-20T10:00:00+08:00"],
        "the digest approved at t07, and the start of the Invocation presented for execution",
        lambda r: [
            pay(r.fe("confirmation_mismatch"), "t07")["approved_digest"],
            r.fault("confirmation_mismatch").presented.normalized_arguments["start"],
        ],
    ),
    row(
        "7.15",
        "3-timeout-not-committed",
        "3. 提交前超时。外部系统明确返回未提交",
        ["NOT_COMMITTED", "not_committed"],
        "the timeout_before_commit run's t09: state and commit status",
        lambda r: [
            pay(r.fe("timeout_before_commit"), "t09")["state"],
            pay(r.fe("timeout_before_commit"), "t09")["commit"]["status"],
        ],
    ),
    row(
        "7.15",
        "3-timeout-retry-same-key",
        "可按同一幂等键和预算重试",
        [[KEY, KEY], ["evt_6K2"]],
        "the keys of the attempts (invocation.started/retried) and the calendar's events at the end",
        lambda r: [
            [
                e["payload"]["idempotency_key"]
                for e in r.fault("timeout_before_commit").events
                if e["event_type"] in ("invocation.started", "invocation.retried")
            ],
            r.fault("timeout_before_commit").events[-1]["payload"]["commit"]["calendar_events"],
        ],
    ),
    row(
        "7.15",
        "4-lost-outcome-unknown",
        "4. 提交后响应丢失。本地先看到 timeout，状态为 OUTCOME_UNKNOWN",
        ["external.outcome_unknown", "OUTCOME_UNKNOWN"],
        "the response_lost_after_commit run's t09",
        lambda r: [
            r.fe("response_lost_after_commit")["t09"]["event_type"],
            pay(r.fe("response_lost_after_commit"), "t09")["state"],
        ],
    ),
    row(
        "7.15",
        "4-lost-query-same-key",
        "以同一键查询得到 evt_6K2 后转为 COMMITTED",
        ["COMMITTED", "query", "evt_6K2", KEY],
        "the run's t10: state, how it was resolved, event ID, key",
        lambda r: (
            [pay(r.fe("response_lost_after_commit"), "t10")[k] for k in ("state", "resolved_by")]
            + [pay(r.fe("response_lost_after_commit"), "t10")["commit"][k] for k in ("event_id", "idempotency_key")]
        ),
    ),
    row(
        "7.15",
        "4-lost-no-second-event",
        "不得创建第二个事件",
        [["evt_6K2"], 1],
        "the calendar's events and the service's executions at the end of the run",
        lambda r: [
            r.fault("response_lost_after_commit").events[-1]["payload"]["commit"]["calendar_events"],
            r.fault("response_lost_after_commit").events[-1]["payload"]["commit"]["executions"],
        ],
    ),
    # ---------------------------------------------------------------- §7.16 (the run-decided cells)
    row(
        "7.16",
        "text-no-rng",
        "文本轨迹 随机入口：本夹具 greedy，无 RNG",
        [],
        "events of trace one that consume random numbers",
        lambda r: rng_consumers(r.text.events),
    ),
    row(
        "7.16",
        "diffusion-rng-initial-latent",
        "扩散轨迹 随机入口：初始 latent RNG",
        ["d01"],
        "events of trace two that consume random numbers",
        lambda r: rng_consumers(r.diffusion.events),
    ),
    # ---------------------------------------------------------------- §7.17 the first-divergence algorithm
    row(
        "7.17",
        "comparison-order",
        "for each corresponding event pair: compare … (six comparisons, in order)",
        list(RULE_LINES.values()),
        "labkit's rules, in the order first_divergence applies them",
        lambda r: [RULE_LINES.get(rule, rule) for rule in RULES],
    ),
    row(
        "7.17",
        "cross-kind",
        "跨范式轨迹不比较“第 10 步是否相同”",
        "not compared step by step",
        "first_divergence of trace one and trace two",
        refused_across_kinds,
    ),
]


#: Chapter items test_chapter7_figures.py asserts against the chapter's value: (§, item, its test)
FIGURES_COVERED = [
    (
        "7.2",
        "IDs 14–19 spelled 短波蓝光 … reserved; 18/19 control tokens; vocabulary 20",
        "test_7_2_ids_14_to_19_are_spelled_as_the_chapter_lists_them",
    ),
    (
        "7.3",
        "e06 stream.delta seq 0, UTF-8 bytes for 短波蓝光",
        "test_7_3_to_7_5_each_stream_delta_carries_its_tokens_utf8_bytes",
    ),
    (
        "7.4",
        "e10, e14, e18: seq 1, 2, 3 and their bytes",
        "test_7_3_to_7_5_each_stream_delta_carries_its_tokens_utf8_bytes",
    ),
    (
        "7.5",
        "7. delta 序号为 0、1、2、3，终态序号为 4",
        "test_7_3_to_7_5_each_stream_delta_carries_its_tokens_utf8_bytes",
    ),
    ("7.5", "8. FINISHED appears once", "test_7_3_to_7_5_each_stream_delta_carries_its_tokens_utf8_bytes"),
    ("7.7", "d08 response.completed FINISHED, image reference", "test_7_7_d08_response_completed_is_finished"),
    (
        "7.11",
        "generated_proposal_tokens = 27 (the decode's steps)",
        "test_7_11_the_grammar_overrules_the_raw_argmax_in_24_of_27_steps",
    ),
    (
        "7.12",
        "确认界面显示规范化后的时间、标题、目标日历和时区",
        "test_7_12_the_confirmation_card_shows_time_title_calendar_and_zone",
    ),
    (
        "7.12",
        "t06 invocation digest = H(canonical invocation inv_01)",
        "test_7_12_the_confirmation_card_shows_time_title_calendar_and_zone",
    ),
    (
        "7.13",
        "request_digest = H(normalized_arguments); t08's idempotency_key",
        "test_7_13_t08_request_digest_is_h_of_the_normalized_arguments",
    ),
    (
        "7.15",
        "1. notify_all → VALIDATION_REJECTED at t03",
        "test_7_15_extra_field_is_carried_from_the_first_event_that_holds_it",
    ),
]
#: the table's size when written; a smaller table fails ``test_the_table_cannot_shrink``
MIN_ROWS = 229


def _plain(value):
    """JSON-like plain values: tuples → lists, NumPy scalars and arrays → Python values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def check(row_: Row, computed) -> None:
    """Assert ``computed`` is the row's expected value: the chapter's, or the book's where it departs."""
    expected = row_.chapter if row_.book is None else row_.book.value
    where = f"§{row_.section} {row_.name}: the chapter prints {row_.text!r} ({row_.how})"
    if row_.tol is None:
        assert _plain(computed) == _plain(expected), f"{where}; labkit computes {_plain(computed)!r}"
        return
    got, want = np.asarray(computed, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert got.shape == want.shape, f"{where}; labkit's shape {list(got.shape)}"
    gap = float(np.max(np.abs(got - want))) if got.size else 0.0
    assert gap <= row_.tol, f"{where}; labkit computes {got.tolist()} (off by {gap:.3g} > {row_.tol})"


def _param(row_: Row):
    marks = [pytest.mark.xfail(strict=True, reason=row_.mismatch)] if row_.mismatch else []
    return pytest.param(row_, id=f"{row_.section}-{row_.name}", marks=marks)


@pytest.mark.parametrize("row_", [_param(r) for r in ROWS])
def test_labkit_computes_the_chapters_value(row_: Row, runs: Runs):
    check(row_, row_.compute(runs))
    if row_.book is not None:
        assert _plain(row_.book.value) != _plain(row_.chapter), f"{row_.name}: a departure must differ from the chapter"
        page = (PAGES / row_.book.page).read_text(encoding="utf-8")
        assert row_.book.phrase in page, f"{row_.book.page} must say the book departs here ({row_.book.phrase!r})"


# -- the table itself ------------------------------------------------------------------------


def test_the_rows_read_runs_that_are_the_golden_traces(runs: Runs):
    """The runs the rows read are event for event the golden traces, so the golden files hold the
    chapter's values too (the golden equality itself is kept in the trace tests)."""
    for name, run in (("text.jsonl", runs.text), ("diffusion.jsonl", runs.diffusion), ("tool.jsonl", runs.tool)):
        assert run.events == read_golden(name), f"the run differs from fixtures/traces/{name}"


def test_the_table_has_unique_rows_and_covers_every_section():
    names = [f"{r.section}-{r.name}" for r in ROWS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    sections = {r.section for r in ROWS} | {s for s, *_ in FIGURES_COVERED}
    assert sections == {f"7.{i}" for i in range(1, 18)}, sorted(sections)  # §7.18 prints no value
    assert all(r.tol is None or isinstance(r.tol, float) for r in ROWS)


def test_the_table_cannot_shrink():
    assert len(ROWS) >= MIN_ROWS, f"the chapter-value table has {len(ROWS)} rows; it had {MIN_ROWS}"


def test_the_items_left_to_test_chapter7_figures_are_still_tested_there():
    source = (Path(__file__).parent / "test_chapter7_figures.py").read_text(encoding="utf-8")
    defined = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    missing = sorted({test for *_, test in FIGURES_COVERED} - defined)
    assert not missing, f"FIGURES_COVERED names tests test_chapter7_figures.py no longer has: {missing}"


def test_mismatch_rows_are_stated_and_departure_rows_name_an_existing_page():
    for r in ROWS:
        if r.mismatch:
            assert r.book is None and len(r.mismatch) > 20
        if r.book:
            assert (PAGES / r.book.page).exists() and r.mismatch is None


@pytest.mark.parametrize(
    ("name", "broken"),
    [
        ("7.3-input_ids", [[1, 2, 7, 3, 4, 8, 9, 10, 11, 13, 5, 6]]),  # one ID changed
        ("7.4-ledger-step-2", [13, 15, 15, "的散射", True, 15]),  # cache after off by one
        ("7.3-logit-14", 4.21),  # a logit off by 0.01
        ("7.8-z_1", [1.442872, -1.521446]),  # the sixth decimal's neighbour
        ("7.11-arguments", {**ARGUMENTS, "local_time": "10:00"}),
        ("7.13-key-at-the-service", ["req-42:create-event:2", [KEY]]),
        ("7.3-e05", ("token.selected", "decoder", 1, 14, "greedy_argmax")),  # the identifier, unread
    ],
)
def test_a_changed_value_fails_its_row(name, broken):
    """The comparison notices a changed computed value (so a regression cannot pass its row)."""
    row_ = next(r for r in ROWS if f"{r.section}-{r.name}" == name)
    with pytest.raises(AssertionError):
        check(row_, broken)
