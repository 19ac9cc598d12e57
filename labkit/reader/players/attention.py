"""The attention/mask viewer's data, each view computed by the book's own functions: ``prefill``, trace
one's prefill attention per layer and query head [12 queries, 12 keys] (``run_text_trace``); ``masks``,
the causal and packed-document masks of the lab row; ``decode``, the lab decoder fed its 7 tokens with k
already cached, under the causal or the top-left mask, layer 0 (``lab_decoder.attention_state``).

    data = {"player": "attention", "start": group, "groups": {group: {"title", "controls":
              [{"name", "label", "options": [str], "shown"}], "panels": {"opt|opt": panel}}}}
    panel = {"caption", "rows": [labels], "cols": [labels], "kind": "weights" | "mask",
             "heads": [{"title", "values": [[4 dp | None (blocked)]]}]}
"""

import numpy as np

from labkit.labs.lab_decoder import MASK_KINDS, attention_state, lab_tokens
from labkit.labs.masks import PACKED_DOCUMENT_IDS, document_causal_allowed
from labkit.nn.attention import causal_allowed
from labkit.reader.players.data import one_of, r4, words
from labkit.text.runtime import run_text_trace

MASK_NAMES = {"causal": "causal (bottom-right)", "top-left rectangular": "top-left rectangular"}
#: what a picker shows for an option (the option itself, English, keys the panels)
SHOWN = {
    "causal (bottom-right)": words("causal (bottom-right)", "因果（右下对齐）"),
    "top-left rectangular": words("top-left rectangular", "左上对齐矩形"),
    "causal": words("causal", "因果"),
    "packed documents": words("packed documents", "打包的文档"),
}


def shown(option: str) -> str | dict:
    """What a picker shows for ``option``: its words, else the option itself (a number)."""
    if option.startswith("layer "):
        return words(option, f"第 {option.removeprefix('layer ')} 层")
    return SHOWN.get(option, option)


def matrix(values: np.ndarray, allowed: np.ndarray) -> list[list[float | None]]:
    """[R, C] → rows of 4-decimal floats, None where ``allowed`` is False."""
    rows = zip(values, allowed, strict=True)
    return [[r4(v) if k else None for v, k in zip(row, keep, strict=True)] for row, keep in rows]


def panel(caption: dict, rows, cols, kind: str, heads: list[tuple[str | dict, np.ndarray, np.ndarray]]) -> dict:
    """One view: ``heads`` as (title, values [R, C], allowed [R, C])."""
    return {
        "caption": caption,
        "rows": [r if isinstance(r, dict) else str(r) for r in rows],
        "cols": [c if isinstance(c, dict) else str(c) for c in cols],
        "kind": kind,
        "heads": [{"title": title, "values": matrix(values, allowed)} for title, values, allowed in heads],
    }


def group(title: dict, controls: list[tuple[str, dict, list[str]]], panels: dict) -> dict:
    """A group of views; ``controls``: (name, label, options) (the panels' keys join one option of each)."""
    pickers = [
        {"name": name, "label": label, "options": options, "shown": [shown(o) for o in options]}
        for name, label, options in controls
    ]
    return {"title": title, "controls": pickers, "panels": panels}


def prefill_group(run=None) -> dict:
    """Trace one's prefill attention weights: one panel per layer, one heatmap per query head."""
    run = run or run_text_trace()
    labels = [run.tokenizer.pieces[i] for i in run.input_ids[0]]
    panels = {}
    for li, layer in enumerate(run.prefill.layers):
        weights = layer.attention_weights[0]  # [H, T, T]
        allowed = np.tril(np.ones(weights.shape[-2:], dtype=bool))
        heads = [
            (words(f"query head {h} (reads KV head 0)", f"查询头 {h}（读 KV 头 0）"), weights[h], allowed)
            for h in range(weights.shape[0])
        ]
        caption = words(
            f"trace one, prefill, layer {li}: each row (query) sums to 1 over the keys it may see",
            f"轨迹一，预填充，第 {li} 层：每一行（查询）在它能看到的键上加起来为 1",
        )
        panels[f"layer {li}"] = panel(caption, labels, labels, "weights", heads)
    layer = ("layer", words("layer", "层"), list(panels))
    return group(words("prefill attention (trace one)", "预填充注意力（轨迹一）"), [layer], panels)


def masks_group() -> dict:
    """The causal mask and the packed-document mask of the lab's packed row."""
    ids = np.asarray(PACKED_DOCUMENT_IDS)
    t = np.arange(ids.size)
    labels = [words(f"{i} (doc {d})", f"{i}（文档 {d}）") for i, d in zip(t, ids, strict=True)]
    causal, packed = causal_allowed(t, t), document_causal_allowed(ids)
    what = words(
        f"packed documents {list(PACKED_DOCUMENT_IDS)}: j ≤ i and the same document (block-diagonal)",
        f"打包的文档 {list(PACKED_DOCUMENT_IDS)}：j ≤ i 且属于同一文档（块对角）",
    )
    causal_caption = words("causal: query i sees keys j ≤ i", "因果：查询 i 看到键 j ≤ i")
    panels = {
        "causal": panel(causal_caption, labels, labels, "mask", [("allowed[i, j]", causal, causal)]),
        "packed documents": panel(what, labels, labels, "mask", [("allowed[i, j]", packed, packed)]),
    }
    title = words("masks: causal and packed documents", "mask：因果与打包的文档")
    return group(title, [("mask", "mask", list(panels))], panels)


def decode_group(layer: int = 0) -> dict:
    """The lab decoder with k ∈ 0…6 tokens cached and the rest fed at once, both masks."""
    panels = {}
    for cached in range(lab_tokens().size):
        for mask in MASK_KINDS:
            state = attention_state(cached, mask, layer)
            t_new, t_all = state.allowed.shape
            caption = words(
                f"{cached} cached + {t_new} new tokens, {MASK_NAMES[mask]} mask, layer {layer} (grey: blocked)",
                f"已缓存 {cached} 个 + 新 {t_new} 个 token，{SHOWN[MASK_NAMES[mask]]['zh']} mask，"
                f"第 {layer} 层（灰色：被屏蔽）",
            )
            heads = [
                (words(f"layer {layer}, head {h}", f"第 {layer} 层，头 {h}"), w, state.allowed)
                for h, w in enumerate(state.weights)
            ]
            key = f"{cached}|{MASK_NAMES[mask]}"
            panels[key] = panel(caption, state.query_positions, range(t_all), "weights", heads)
    controls = [
        ("cached", words("cached tokens", "已缓存 token"), [str(k) for k in range(lab_tokens().size)]),
        ("alignment", "mask", list(MASK_NAMES.values())),
    ]
    return group(
        words("decode: cached + new tokens (lab decoder)", "decode：已缓存 + 新 token（实验解码器）"), controls, panels
    )


def static_data(start: str = "decode", run=None) -> dict:
    """Every group; lab 3 opens on the decode masks, trace one's page on the prefill (its ``run``)."""
    one_of("start", start, ("prefill", "masks", "decode"))
    groups = {"prefill": prefill_group(run), "masks": masks_group(), "decode": decode_group()}
    return {
        "title": words("Attention and masks", "注意力与 mask"),
        "start": start,
        "groups": groups,
        "initial": {"cached": "3"},
    }
