"""Pieces of trace three that a reader (or a test) may substitute with their own function.

``run_tool_trace(config, ToolHooks(...))`` runs the real runtime with some pieces replaced;
``None`` keeps the library's piece.  The hooks are configuration, passed in — the library's
modules are never patched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labkit.core.runtime import Hooks


@dataclass(frozen=True)
class ToolHooks(Hooks):
    """What each substitute replaces is beside it; what it takes and returns is in ``SIGNATURES``."""

    proposal_mask: Callable | None = None  # ``SchemaGrammar.mask`` in mc_01's decode, given the text so far
    digest_matches: Callable | None = None  # the binding test inside ``check_confirmation``
    reusable_prefix: Callable | None = None  # ``common_prefix``: how much of mc_01's cache mc_02 reuses
    #: the idempotency decision of ``CalendarService.create_event`` (desk: a ``calendar_service.ServiceDesk``)
    service_execute: Callable | None = None

    SIGNATURES = {
        "proposal_mask": "a function (text) -> allowed [V] bool",
        "digest_matches": "a function (confirmation, invocation) -> bool",
        "reusable_prefix": "a function (cached_ids, new_ids) -> int",
        "service_execute": "a function (desk, key, request_digest, request) -> response",
    }
