"""Greedy decoding under a token mask, one recorded step at a time.

``greedy_decode`` is model-agnostic: it takes the first raw logits [V], a ``feed``
function that appends one chosen token and returns the next raw logits [V], and a
``mask_for(text)`` function that returns the allowed tokens [V] for the output so far.
Each step picks

    y_t = argmax_v { raw_logits_t[v] : allowed_t[v] }      (ties → the lowest ID)

and stops after a stop token or at ``max_tokens`` (finish reason ``length``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


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

    @property
    def forced(self) -> bool:
        return len(self.allowed_ids) == 1


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
    """Masked greedy decoding; ``stop_ids`` maps each stop token to its finish reason."""
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
