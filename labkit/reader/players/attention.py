"""The attention/mask viewer: attention weights and masks as heatmaps, drawn in the browser.

Three groups of views, each computed by the book's own functions:

- ``prefill``: trace one's prefill attention, per layer and query head, [12 queries, 12 keys]
  (``labkit.text.runtime.run_text_trace``);
- ``masks``: the causal mask and the packed-document mask of the lab row
  (``labkit.nn.attention.causal_allowed``, ``labkit.labs.masks.document_causal_allowed``);
- ``decode``: the lab decoder fed its 7 tokens with k of them already cached, with the causal
  (bottom-right aligned) or the top-left rectangular mask, layer 0, both heads
  (``labkit.reader.widgets.attention.attention_state``).

    data = {"player": "attention", "start": group, "groups": {group: {"title", "controls":
              [{"name", "label", "options": [str]}], "panels": {"opt|opt": panel}}}}
    panel = {"caption", "rows": [labels], "cols": [labels], "kind": "weights" | "mask",
             "heads": [{"title", "values": [[4 dp | None (blocked)]]}]}
"""

from __future__ import annotations

import numpy as np

from labkit.reader.players.base import Player, r4


def matrix(values: np.ndarray, allowed: np.ndarray | None = None) -> list[list[float | None]]:
    """[R, C] → rows of 4-decimal floats, None where ``allowed`` is False."""
    values = np.asarray(values, dtype=np.float64)
    keep = np.ones(values.shape, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    return [
        [r4(v) if k else None for v, k in zip(row, krow, strict=True)] for row, krow in zip(values, keep, strict=True)
    ]


def prefill_group(run=None) -> dict:
    """Trace one's prefill attention weights: one panel per layer, one heatmap per query head."""
    from labkit.text.runtime import run_text_trace

    run = run or run_text_trace()
    labels = [run.tokenizer.pieces[i] for i in run.input_ids[0]]
    panels = {}
    for li, layer in enumerate(run.prefill.layers):
        weights = layer.attention_weights[0]  # [H, T, T]
        allowed = np.tril(np.ones(weights.shape[-2:], dtype=bool))
        panels[f"layer {li}"] = {
            "caption": f"trace one, prefill, layer {li}: each row (query) sums to 1 over the keys it may see",
            "rows": labels,
            "cols": labels,
            "kind": "weights",
            "heads": [
                {"title": f"query head {h} (reads KV head 0)", "values": matrix(weights[h], allowed)}
                for h in range(weights.shape[0])
            ],
        }
    return {
        "title": "prefill attention (trace one)",
        "controls": [{"name": "layer", "label": "layer", "options": list(panels)}],
        "panels": panels,
    }


def masks_group() -> dict:
    """The causal mask and the packed-document mask of the lab's packed row."""
    from labkit.labs.masks import PACKED_DOCUMENT_IDS, document_causal_allowed
    from labkit.nn.attention import causal_allowed

    ids = np.asarray(PACKED_DOCUMENT_IDS)
    t = np.arange(ids.size)
    labels = [f"{i} (doc {d})" for i, d in zip(t, ids, strict=True)]
    causal = causal_allowed(t, t)
    packed = document_causal_allowed(ids)
    panels = {
        "causal": {
            "caption": "causal: query i sees keys j ≤ i",
            "rows": labels,
            "cols": labels,
            "kind": "mask",
            "heads": [{"title": "allowed[i, j]", "values": matrix(causal, causal)}],
        },
        "packed documents": {
            "caption": f"packed documents {list(PACKED_DOCUMENT_IDS)}: j ≤ i and the same document (block-diagonal)",
            "rows": labels,
            "cols": labels,
            "kind": "mask",
            "heads": [{"title": "allowed[i, j]", "values": matrix(packed, packed)}],
        },
    }
    return {
        "title": "masks: causal and packed documents",
        "controls": [{"name": "mask", "label": "mask", "options": list(panels)}],
        "panels": panels,
    }


def decode_group(layer: int = 0) -> dict:
    """The lab decoder with k ∈ 0…6 tokens cached and the rest fed at once, both masks."""
    from labkit.labs.lab_decoder import lab_tokens
    from labkit.reader.widgets.attention import MASK_KINDS, attention_state

    names = {MASK_KINDS[0]: "causal (bottom-right)", MASK_KINDS[1]: "top-left rectangular"}
    panels = {}
    for cached in range(lab_tokens().size):
        for mask in MASK_KINDS:
            state = attention_state(cached, mask, layer)
            t_all = state.allowed.shape[1]
            panels[f"{cached}|{names[mask]}"] = {
                "caption": f"{cached} cached + {state.allowed.shape[0]} new tokens, {names[mask]} mask, "
                f"layer {layer} (grey: blocked)",
                "rows": [str(p) for p in state.query_positions],
                "cols": [str(j) for j in range(t_all)],
                "kind": "weights",
                "heads": [
                    {"title": f"layer {layer}, head {h}", "values": matrix(state.weights[h], state.allowed)}
                    for h in range(state.weights.shape[0])
                ],
            }
    return {
        "title": "decode: cached + new tokens (lab decoder)",
        "controls": [
            {"name": "cached", "label": "cached tokens", "options": [str(k) for k in range(lab_tokens().size)]},
            {"name": "alignment", "label": "mask", "options": list(names.values())},
        ],
        "panels": panels,
    }


def attention_data(start: str = "decode", run=None) -> dict:
    groups = {"prefill": prefill_group(run), "masks": masks_group(), "decode": decode_group()}
    if start not in groups:
        raise ValueError(f"start must be one of {list(groups)}, got {start!r}")
    return {
        "player": "attention",
        "title": "Attention and masks",
        "start": start,
        "groups": groups,
        "initial": {"cached": "3"},
    }


def static_data(start: str = "decode") -> dict:
    """What a page embeds: lab 3 opens on the decode masks, trace one's page on the prefill."""
    return attention_data(start)


class AttentionPlayer(Player):
    player = "attention"
    title = "Attention and mask viewer"


def attention_player(start: str = "decode", run=None) -> AttentionPlayer:
    return AttentionPlayer(attention_data(start, run))
