"""Pieces of trace one's runtime that a reader's function may replace (the exercises use it).

A hook is passed to ``run_text_trace(config, TextHooks(...))``; the library's modules are
never patched.  Neither hook is a fault, and without them nothing changes:

* ``processors`` — ``{name: fn}`` replaces logits processors by name, each
  ``fn(logits [V], context) -> logits [V]`` (see ``processors.resolve_processors``); the
  configured order still decides when each runs;
* ``decode_step(decoder, cache, token_id) -> logits [V]`` replaces the decoder's own cached
  step: it must feed ``token_id`` at position = cache length and append to ``cache``.  The
  runtime records the logits at that position and the cache lengths it finds afterwards;
  the per-layer shape ``ledger`` of ``decode.completed`` is internal to the function and
  left out of the event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from labkit.core.runtime import Hooks


@dataclass(frozen=True)
class TextHooks(Hooks):
    """Substitutes for pieces of ``run_text_trace``; ``None`` keeps the library's piece."""

    processors: Mapping[str, Callable] | None = None
    decode_step: Callable | None = None

    SIGNATURES = {
        "processors": "a mapping {processor name: function (logits, context) -> logits}",
        "decode_step": "a function (decoder, cache, token_id) -> logits",
    }

    def _acceptable(self, name: str, value: Any) -> bool:
        return isinstance(value, Mapping) if name == "processors" else callable(value)
