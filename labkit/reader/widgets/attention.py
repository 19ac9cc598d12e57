"""Widgets of the attention labs: the mask viewer (lab 02), and the attention states (lab 03)
the attention player draws in the browser (``labkit.reader.players.attention``).

Each widget has a *state* (plain NumPy, computed by the labs' own functions), a *drawing
function* that renders a state onto a matplotlib figure, and a small ipywidgets front end
whose picture is that same drawing, rendered to PNG (the shared front end is
``labkit.reader.widgets.lab_base.WidgetView``).  The static book calls the drawing function on the
default state (``mask_viewer_figure()`` …), so widget and static figure can never disagree.
ipywidgets and matplotlib are imported inside functions only.

    viewer = mask_viewer();         viewer.state.supervised_positions
    attention_state(cached=3).weights                                 # [H, Tq, Tk]

The cache-fault modes of lab 05 are a player (``labkit.reader.players.fault_modes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_tokens
from labkit.labs.masks import PACKED_DOCUMENT_IDS, document_causal_allowed, packing_prediction_mask, sft_prediction_mask
from labkit.nn import KVCache
from labkit.nn.attention import causal_allowed
from labkit.reader.widgets.lab_base import WidgetView, static_figure

MASK_KINDS = ("causal", "top-left rectangular")
#: the longest row the mask viewer draws legibly
MAX_VIEW_TOKENS = 24


# ---------------------------------------------------------------------------------------
# mask viewer
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MaskState:
    """Masks of one packed row of T tokens.

    document_ids [T] int, assistant_target [T] bool (token is a training target),
    prediction_mask [T−1] bool (prediction i → token i+1 is supervised: same document and
    token i+1 an assistant target), allowed [T, T] bool (document-causal attention),
    supervised_positions: the prediction positions where prediction_mask is true.
    """

    document_ids: np.ndarray
    assistant_target: np.ndarray
    prediction_mask: np.ndarray
    allowed: np.ndarray
    supervised_positions: list[int]


def mask_state(document_ids=PACKED_DOCUMENT_IDS, assistant_target=None) -> MaskState:
    """Masks for ``document_ids`` [T] and ``assistant_target`` [T] (None: every token a target)."""
    ids = np.asarray(document_ids)
    if ids.ndim != 1 or ids.size < 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"document_ids must be at least two integers, got {ids.tolist()!r}")
    if ids.size > MAX_VIEW_TOKENS:
        raise ValueError(f"document_ids: the viewer draws at most {MAX_VIEW_TOKENS} tokens, got {ids.size}")
    flags = np.ones(ids.size, dtype=bool) if assistant_target is None else np.asarray(assistant_target)
    if flags.shape != ids.shape or flags.dtype != np.bool_:
        raise ValueError(f"assistant_target must be {ids.size} booleans (one per document ID), got {flags.tolist()!r}")
    prediction = packing_prediction_mask(ids) & sft_prediction_mask(flags)
    return MaskState(
        document_ids=ids,
        assistant_target=flags,
        prediction_mask=prediction,
        allowed=document_causal_allowed(ids),
        supervised_positions=np.flatnonzero(prediction).tolist(),
    )


def parse_document_ids(text: str) -> np.ndarray:
    """ "0 0 1 1" or "0,0,1,1" → int array [T]."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not parts or not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ValueError(f"document IDs must be non-negative integers separated by spaces, got {text!r}")
    return np.array([int(p) for p in parts], dtype=np.int64)


def parse_flags(text: str) -> np.ndarray:
    """ "0 0 1 1" → bool array [T] (only 0 and 1 allowed)."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not parts or any(p not in ("0", "1") for p in parts):
        raise ValueError(f"assistant-target flags must be 0 or 1 separated by spaces, got {text!r}")
    return np.array([p == "1" for p in parts])


def draw_mask_view(state: MaskState, figure) -> None:
    """Allowed-attention matrix [T, T] on the left; IDs, targets and prediction mask on the right."""
    t = state.document_ids.size
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})
    left.imshow(state.allowed, cmap="Blues", vmin=0, vmax=1.4)
    for i, j in zip(*np.nonzero(state.allowed), strict=True):
        left.text(j, i, "1", ha="center", va="center", fontsize=8)
    left.set_xticks(range(t))
    left.set_yticks(range(t))
    left.set_xlabel("key position j")
    left.set_ylabel("query position i")
    left.set_title("allowed[i, j]: j ≤ i, same document", fontsize=10)

    rows = np.full((3, t), np.nan)
    rows[0] = state.document_ids % 2
    rows[1] = state.assistant_target
    rows[2, :-1] = state.prediction_mask
    right.imshow(rows, cmap="Greens", vmin=-0.3, vmax=1.3, aspect="auto")
    for j in range(t):
        right.text(j, 0, str(int(state.document_ids[j])), ha="center", va="center", fontsize=9)
        right.text(j, 1, "1" if state.assistant_target[j] else "0", ha="center", va="center", fontsize=9)
        if j < t - 1:
            right.text(j, 2, "1" if state.prediction_mask[j] else "0", ha="center", va="center", fontsize=9)
    right.set_yticks(range(3), ["document ID", "target token", "prediction i→i+1"])
    right.set_xticks(range(t))
    right.set_xlabel("position")
    right.set_title(f"supervised predictions: {state.supervised_positions}", fontsize=10)
    right.spines[:].set_visible(False)


def mask_viewer_figure(state: MaskState | None = None):
    """The mask viewer's view (default: two packed four-token documents) as a pyplot figure."""
    return static_figure(draw_mask_view, state or mask_state(), (8.0, 3.6))


class MaskViewer(WidgetView):
    """Edit document IDs and assistant-target flags; ``state`` and ``error`` follow the edits."""

    def __init__(self, document_ids=PACKED_DOCUMENT_IDS, assistant_target=None, render: bool = True):
        import ipywidgets as widgets

        self.render = render

        first = mask_state(document_ids, assistant_target)
        self.state: MaskState = first
        self.error: str | None = None
        layout = widgets.Layout(width="420px")
        self.document_ids_text = widgets.Text(
            value=" ".join(str(int(i)) for i in first.document_ids),
            description="document IDs",
            layout=layout,
            continuous_update=False,
        )
        self.assistant_text = widgets.Text(
            value=" ".join("1" if f else "0" for f in first.assistant_target),
            description="targets",
            layout=layout,
            continuous_update=False,
        )
        self._assemble([self.document_ids_text, self.assistant_text])

    def update(self, change=None) -> None:
        """Recompute the state from the two text boxes and redraw; bad input shows its error."""
        self._show(
            lambda: mask_state(
                parse_document_ids(self.document_ids_text.value), parse_flags(self.assistant_text.value)
            ),
            draw_mask_view,
            lambda s: (
                f"prediction mask {s.prediction_mask.astype(int).tolist()} · "
                f"supervised positions {s.supervised_positions}"
            ),
            (8.0, 3.6),
        )


def mask_viewer(document_ids=PACKED_DOCUMENT_IDS, assistant_target=None, render: bool = True) -> MaskViewer:
    return MaskViewer(document_ids, assistant_target, render)


# ---------------------------------------------------------------------------------------
# attention states (drawn by the attention player, labkit.reader.players.attention)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionState:
    """Attention of the new tokens of one lab-decoder step.

    ``cached`` tokens already sit in the cache; the other T_new = 7 − cached tokens are fed
    at once.  weights [H, T_new, T] (rows: new queries, columns: every key), allowed
    [T_new, T], query_positions [T_new].
    """

    cached: int
    mask: str
    layer: int
    weights: np.ndarray
    allowed: np.ndarray
    query_positions: np.ndarray


def attention_state(cached: int = 3, mask: str = "causal", layer: int = 0) -> AttentionState:
    """Run the lab decoder on its tokens with ``cached`` of them prefilled; keep layer ``layer``'s weights.

    mask "causal": query at position p sees keys 0…p (bottom-right aligned);
    mask "top-left rectangular": the decoder's ``top_left_rectangular_mask`` fault, the
    lower triangle of the [T_new, T] rectangle anchored at its top-left corner.
    """
    tokens = lab_tokens()
    if not isinstance(cached, (int, np.integer)) or not 0 <= cached < tokens.size:
        raise ValueError(f"cached must be an integer in [0, {tokens.size - 1}], got {cached!r}")
    if mask not in MASK_KINDS:
        raise ValueError(f"mask must be one of {list(MASK_KINDS)}, got {mask!r}")
    if layer not in range(LAB_CONFIG.n_layers):
        raise ValueError(f"layer must be in [0, {LAB_CONFIG.n_layers - 1}], got {layer!r}")
    model = lab_decoder("top_left_rectangular_mask" if mask == MASK_KINDS[1] else None)
    cache = KVCache(model.config.n_layers)
    if cached:
        model.prefill(tokens[np.newaxis, :cached], cache)
    result = model.decode(tokens[np.newaxis, cached:], cache, keep_attention=True)
    weights = result.layers[layer].attention_weights[0]  # [H, T_new, T]
    t_new, t_all = weights.shape[-2:]
    if mask == MASK_KINDS[0]:
        allowed = causal_allowed(result.positions, np.arange(t_all))
    else:
        allowed = np.tril(np.ones((t_new, t_all), dtype=bool))
    return AttentionState(
        cached=int(cached), mask=mask, layer=layer, weights=weights, allowed=allowed, query_positions=result.positions
    )
