"""Pieces of trace three that a reader (or a test) may substitute with their own function.

``run_tool_trace(config, ToolHooks(...))`` runs the real runtime with some pieces
replaced; ``None`` keeps the library's piece.  The hooks are configuration, passed in —
the library's modules are never patched.

* ``proposal_mask(text) -> allowed [V] bool`` — the grammar mask of mc_01's decode, given the
  proposal text written so far (replaces ``SchemaGrammar.mask``);
* ``digest_matches(confirmation, invocation) -> bool`` — does this approval authorise exactly
  this Invocation? (replaces the binding test inside ``check_confirmation``);
* ``reusable_prefix(cached_ids [T_a], new_ids [T_b]) -> int`` — how many leading positions of
  the cached call the next call may reuse (replaces ``common_prefix``);
* ``service_execute(desk, key, request_digest, request) -> response`` — the calendar service's
  idempotent execute (replaces the idempotency decision of ``CalendarService.create_event``;
  ``desk`` is a ``labkit.tools.calendar_service.ServiceDesk``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labkit.core.runtime import Hooks


@dataclass(frozen=True)
class ToolHooks(Hooks):
    """Substitutes for pieces of ``run_tool_trace``; ``None`` keeps the library's piece."""

    proposal_mask: Callable | None = None
    digest_matches: Callable | None = None
    reusable_prefix: Callable | None = None
    service_execute: Callable | None = None

    SIGNATURES = {
        "proposal_mask": "a function (text) -> allowed [V] bool",
        "digest_matches": "a function (confirmation, invocation) -> bool",
        "reusable_prefix": "a function (cached_ids, new_ids) -> int",
        "service_execute": "a function (desk, key, request_digest, request) -> response",
    }
