"""Recipe for fixtures/text/ and fixtures/traces/text.jsonl: the tokenizer, the template, toy-decoder-v1's weights
(fitted as ``labkit.text.model`` describes: seeded layers, then the output head solved by least squares on the five
decision states of §7.4) and the golden traces, run on the files just written, so they can never drift from the
weights.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from booktools.fixture_files import save_arrays
from labkit.core.events import write_jsonl
from labkit.core.fixtures import write_json
from labkit.nn import Decoder, DecoderWeights
from labkit.text.model import CONFIG, PROMPT_IDS, SOURCE_LOGITS, WEIGHTS_FILE
from labkit.text.runtime import run_text_trace
from labkit.text.variants import SPLIT_VOCABULARY, VARIANTS

#: chat-template-v1 (``labkit.text.template``), stored as fixtures/text/template.json
TEMPLATE_V1 = {
    "template_id": "chat-template-v1",
    "layout": "<bos><system>{system}</system><user>{user}</user><assistant>",
    "notes": "Synthetic template of trace one. Messages may not contain '<' or '>', "
    "so a message can never forge a tag.",
}
#: token 14 短波蓝光 and 15 的散射 re-cut as bytes: 短波 + e8 93 | 9d + 光的散射 (蓝 = e8 93 9d)
SPLIT_PIECES = {14: "短波".encode() + b"\xe8\x93", 15: b"\x9d" + "光的散射".encode()}
#: toy-tokenizer-v1.  IDs 1–12 are forced by the source's input_ids, 14–19 by §7.2;
#: 0 and 13 are our choice (see TOKENIZER_NOTES).
VOCAB = [
    (0, "<pad>", True),
    (1, "<bos>", True),
    (2, "<system>", True),
    (3, "</system>", True),
    (4, "<user>", True),
    (5, "</user>", True),
    (6, "<assistant>", True),
    (7, "简洁回答", False),
    (8, "天空", False),
    (9, "为什么", False),
    (10, "是", False),
    (11, "蓝色", False),
    (12, "？", False),
    (13, "蓝", False),
    (14, "短波蓝光", False),
    (15, "的散射", False),
    (16, "通常更强", False),
    (17, "。", False),
    (18, "EOS", True),
    (19, "reserved", True),
]
TOKENIZER_NOTES = [
    "The chapter defining IDs 0-13 is not available; they are reconstructed from the "
    "source's input_ids [1, 2, 7, 3, 4, 8, 9, 10, 11, 12, 5, 6] for the rendered context.",
    "1-6 are the template tags, 7 is the system text, 8-12 the five pieces of the question "
    "(天空 / 为什么 / 是 / 蓝色 / ？).",
    "0 is <pad>: a control token (the control mask forbids 0-6 and 19), used only to pad "
    "batches, with attention_mask 0. This request needs no padding.",
    "13 is 蓝, an ordinary piece the trace never emits. It makes longest match visible: "
    "蓝色 becomes one token (11), not 蓝 (13) followed by an unencodable 色.",
    "14-19 are listed in §7.2, spelled as it spells them: 18 EOS and 19 reserved are control tokens "
    "without a <tag>, so no text encodes to them. Text no piece covers is an error: there is no "
    "unknown token and no byte fallback.",
]

#: the greedy selections that lead from one decision state of §7.4 to the next
SELECTIONS = (14, 15, 16, 17, 18)
FIT_SEED = 20260701


def _seeded_layers(rng: np.random.Generator) -> DecoderWeights:
    shapes = CONFIG.weight_shapes()
    arrays = {"embedding": rng.standard_normal(shapes["embedding"]), "output": np.zeros(shapes["output"])}
    for name, shape in shapes.items():
        if name.startswith("layers."):
            arrays[name] = rng.standard_normal(shape) / np.sqrt(shape[0])  # fan-in scaling
    return DecoderWeights.from_arrays({k: v.astype(np.float32) for k, v in arrays.items()}, CONFIG)


def target_logits(seed: int = FIT_SEED) -> np.ndarray:
    """targets [5, V]: the listed logits, seeded unlisted ones below them: at step 1 < 1.10 − 0.3 (below
    the third place), at steps 2–5 < top − 0.8."""
    rng = np.random.default_rng(seed + 1)
    rows = []
    for step, listed in SOURCE_LOGITS.items():
        ceiling = (min(listed.values()) - 0.3) if step == 1 else (max(listed.values()) - 0.8)
        row = rng.uniform(-2.5, ceiling, CONFIG.vocab_size)
        for token_id, logit in listed.items():
            row[token_id] = logit
        rows.append(row)
    return np.stack(rows)


def fit_weights(seed: int = FIT_SEED) -> tuple[DecoderWeights, dict]:
    """Seeded layers, then W_out [d, V] from H [5, d]·W_out = targets [5, V] (``labkit.text.model``'s steps 1–4).
    Returns the weights and a report: the rank of H and max |logit − target|."""
    weights = _seeded_layers(np.random.default_rng(seed))
    eye = np.eye(CONFIG.width, CONFIG.vocab_size, dtype=np.float32)  # W_out = [I_d | 0]: the first d logits *are* h_t
    h = _logits_at_decision_states(weights, eye)[:, : CONFIG.width]  # H [5, d], RMSNorm(x) of the last position
    rank = int(np.linalg.matrix_rank(h))
    if rank != len(SELECTIONS):
        raise ValueError(f"decision states must be independent; rank {rank} < {len(SELECTIONS)}")
    targets = target_logits(seed)  # [5, V]
    head = np.linalg.lstsq(h, targets, rcond=None)[0]  # [d, V]
    for _ in range(2):  # absorb float32 rounding
        got = _logits_at_decision_states(weights, head.astype(np.float32))
        head = head + np.linalg.lstsq(h, targets - got, rcond=None)[0]
    fitted = DecoderWeights(embedding=weights.embedding, output=head.astype(np.float32), layers=weights.layers)
    got = _logits_at_decision_states(fitted, fitted.output)
    return fitted, {"decision_state_rank": rank, "max_abs_error_vs_targets": float(np.max(np.abs(got - targets)))}


def _logits_at_decision_states(weights: DecoderWeights, head: np.ndarray) -> np.ndarray:
    """Real float32 forward passes (prefill, then cached decodes): logits [5, V] as float64."""
    decoder = Decoder(CONFIG, DecoderWeights(weights.embedding, head, weights.layers))
    result, cache = decoder.prefill(np.asarray([PROMPT_IDS]))
    rows = [result.next_logits[0]]
    for token in SELECTIONS[:-1]:
        rows.append(decoder.decode_step([token], cache).next_logits[0])
    return np.stack(rows).astype(np.float64)


def build(dest: Path) -> list[str]:
    """Write the text fixtures under ``dest`` (issue 45's split vocabulary and variants' golden traces
    included); return the paths written, relative to it."""
    folder = Path(dest) / "text"
    tokenizer = {
        "tokenizer_id": "toy-tokenizer-v1",
        "algorithm": "whole <tag> specials, then greedy longest match over the other pieces",
        "notes": TOKENIZER_NOTES,
        "vocab": [{"id": i, "piece": p, "special": s} for i, p, s in VOCAB],
    }
    write_json(folder / "tokenizer.json", tokenizer)
    write_json(folder / "template.json", TEMPLATE_V1)

    weights, report = fit_weights(FIT_SEED)
    if report["max_abs_error_vs_targets"] >= 1e-5:
        raise ValueError(f"fitted logits miss their targets by {report['max_abs_error_vs_targets']:.3g} (need < 1e-5)")
    save_arrays(folder / WEIGHTS_FILE, weights.to_arrays())
    write_json(
        folder / "toy-decoder-v1.json",
        {
            "model_id": CONFIG.model_id,
            "config": {k: v for k, v in asdict(CONFIG).items() if k != "model_id"},
            "fit": {
                "seed": FIT_SEED,
                "method": "seeded normal layers (fan-in scaled); output head solved by least "
                "squares on the five decision states; see labkit.text.model",
                "source_logits": {str(t): {str(i): v for i, v in row.items()} for t, row in SOURCE_LOGITS.items()},
                "decision_state_rank": report["decision_state_rank"],
                "checked": "max |logit - target| < 1e-5 at every decision state",
            },
        },
    )
    write_json(folder / SPLIT_VOCABULARY, split_vocabulary(tokenizer["vocab"]))
    written = ["tokenizer.json", "template.json", WEIGHTS_FILE, "toy-decoder-v1.json", SPLIT_VOCABULARY]
    traces = {"text": run_text_trace(root=folder)}
    traces |= {f"text-{name}": run_text_trace(variant.config(), root=folder) for name, variant in VARIANTS.items()}
    for name, run in traces.items():
        write_jsonl(run.events, Path(dest) / "traces" / f"{name}.jsonl")
    return [*(f"text/{name}" for name in written), *(f"traces/{name}.jsonl" for name in traces)]


def split_vocabulary(vocab: list[dict]) -> dict:
    """toy-tokenizer-v1's entries ``vocab`` with 14 and 15 re-cut as bytes (``SPLIT_PIECES``)."""
    entries = [
        {"id": e["id"], "utf8_hex": SPLIT_PIECES[e["id"]].hex(), "special": False} if e["id"] in SPLIT_PIECES else e
        for e in vocab
    ]
    assert b"".join(SPLIT_PIECES.values()) == "短波蓝光的散射".encode(), "the re-cut keeps the text"
    return {
        "tokenizer_id": "toy-tokenizer-v1-split",
        "algorithm": "as toy-tokenizer-v1; pieces given as utf8_hex are byte strings used in decoding only",
        "notes": [
            "A variant of toy-tokenizer-v1 for issue 45: IDs 14 and 15 are re-cut as a byte-level BPE "
            "would, 短波 + e8 93 | 9d + 光的散射, so 蓝 (e8 93 9d) is split over two tokens.",
            "The model is toy-decoder-v1 unchanged: the IDs it selects are the same, their bytes differ.",
        ],
        "vocab": entries,
    }
