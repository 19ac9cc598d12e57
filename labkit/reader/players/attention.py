"""The attention/mask viewer: attention weights and masks as heatmaps, drawn in the browser.

Three groups of views, each computed by the book's own functions:

- ``prefill``: trace one's prefill attention, per layer and query head, [12 queries, 12 keys]
  (``labkit.text.runtime.run_text_trace``);
- ``masks``: the causal mask and the packed-document mask of the lab row
  (``labkit.nn.attention.causal_allowed``, ``labkit.labs.masks.document_causal_allowed``);
- ``decode``: the lab decoder fed its 7 tokens with k of them already cached, with the causal
  (bottom-right aligned) or the top-left rectangular mask, layer 0, both heads
  (``labkit.labs.lab_decoder.attention_state``).

    data = {"player": "attention", "start": group, "groups": {group: {"title", "controls":
              [{"name", "label", "options": [str]}], "panels": {"opt|opt": panel}}}}
    panel = {"caption", "rows": [labels], "cols": [labels], "kind": "weights" | "mask",
             "heads": [{"title", "values": [[4 dp | None (blocked)]]}]}
"""

from __future__ import annotations

import numpy as np

from labkit.labs.lab_decoder import MASK_KINDS, attention_state, lab_tokens
from labkit.labs.masks import PACKED_DOCUMENT_IDS, document_causal_allowed
from labkit.nn.attention import causal_allowed
from labkit.reader.players.data import one_of, r4
from labkit.text.runtime import run_text_trace

MASK_NAMES = {"causal": "causal (bottom-right)", "top-left rectangular": "top-left rectangular"}


def matrix(values: np.ndarray, allowed: np.ndarray) -> list[list[float | None]]:
    """[R, C] → rows of 4-decimal floats, None where ``allowed`` is False."""
    rows = zip(values, allowed, strict=True)
    return [[r4(v) if k else None for v, k in zip(row, keep, strict=True)] for row, keep in rows]


def panel(caption: str, rows, cols, kind: str, heads: list[tuple[str, np.ndarray, np.ndarray]]) -> dict:
    """One view: ``heads`` as (title, values [R, C], allowed [R, C])."""
    return {
        "caption": caption,
        "rows": [str(r) for r in rows],
        "cols": [str(c) for c in cols],
        "kind": kind,
        "heads": [{"title": title, "values": matrix(values, allowed)} for title, values, allowed in heads],
    }


def group(title: str, controls: dict[str, list[str]], panels: dict) -> dict:
    """A group of views; ``controls``: name → options (the panels' keys join one option of each)."""
    pickers = [{"name": name, "label": label, "options": options} for (name, label), options in controls.items()]
    return {"title": title, "controls": pickers, "panels": panels}


def prefill_group(run=None) -> dict:
    """Trace one's prefill attention weights: one panel per layer, one heatmap per query head."""
    run = run or run_text_trace()
    labels = [run.tokenizer.pieces[i] for i in run.input_ids[0]]
    panels = {}
    for li, layer in enumerate(run.prefill.layers):
        weights = layer.attention_weights[0]  # [H, T, T]
        allowed = np.tril(np.ones(weights.shape[-2:], dtype=bool))
        heads = [(f"query head {h} (reads KV head 0)", weights[h], allowed) for h in range(weights.shape[0])]
        caption = f"trace one, prefill, layer {li}: each row (query) sums to 1 over the keys it may see"
        panels[f"layer {li}"] = panel(caption, labels, labels, "weights", heads)
    return group("prefill attention (trace one)", {("layer", "layer"): list(panels)}, panels)


def masks_group() -> dict:
    """The causal mask and the packed-document mask of the lab's packed row."""
    ids = np.asarray(PACKED_DOCUMENT_IDS)
    t = np.arange(ids.size)
    labels = [f"{i} (doc {d})" for i, d in zip(t, ids, strict=True)]
    causal, packed = causal_allowed(t, t), document_causal_allowed(ids)
    what = f"packed documents {list(PACKED_DOCUMENT_IDS)}: j ≤ i and the same document (block-diagonal)"
    panels = {
        "causal": panel("causal: query i sees keys j ≤ i", labels, labels, "mask", [("allowed[i, j]", causal, causal)]),
        "packed documents": panel(what, labels, labels, "mask", [("allowed[i, j]", packed, packed)]),
    }
    return group("masks: causal and packed documents", {("mask", "mask"): list(panels)}, panels)


def decode_group(layer: int = 0) -> dict:
    """The lab decoder with k ∈ 0…6 tokens cached and the rest fed at once, both masks."""
    panels = {}
    for cached in range(lab_tokens().size):
        for mask in MASK_KINDS:
            state = attention_state(cached, mask, layer)
            t_new, t_all = state.allowed.shape
            caption = f"{cached} cached + {t_new} new tokens, {MASK_NAMES[mask]} mask, layer {layer} (grey: blocked)"
            heads = [(f"layer {layer}, head {h}", w, state.allowed) for h, w in enumerate(state.weights)]
            key = f"{cached}|{MASK_NAMES[mask]}"
            panels[key] = panel(caption, state.query_positions, range(t_all), "weights", heads)
    controls = {("cached", "cached tokens"): [str(k) for k in range(lab_tokens().size)]}
    controls[("alignment", "mask")] = list(MASK_NAMES.values())
    return group("decode: cached + new tokens (lab decoder)", controls, panels)


def static_data(start: str = "decode", run=None) -> dict:
    """Every group; lab 3 opens on the decode masks, trace one's page on the prefill (its ``run``)."""
    one_of("start", start, ("prefill", "masks", "decode"))
    groups = {"prefill": prefill_group(run), "masks": masks_group(), "decode": decode_group()}
    return {
        "title": "Attention and masks",
        "start": start,
        "groups": groups,
        "initial": {"cached": "3"},
    }
