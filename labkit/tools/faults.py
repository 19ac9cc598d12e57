"""The named faults of trace three: each is a scenario, i.e. a change of ``ToolRunConfig``.

``labkit trace tool --fault NAME`` runs one.  ``first_event`` is where the trace first
differs from the golden one and ``component`` the part of the system to suspect; the
catalogue test checks both against ``labkit.trace.divergence`` when it is present.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.tools.runtime import SCENARIOS, ToolRunConfig


@dataclass(frozen=True)
class ToolFault:
    """name; the component at fault; the first event that differs and the rule that fails."""

    name: str
    component: str
    first_event: str
    rule: str = "event_type_and_parent"

    @property
    def description(self) -> str:
        return SCENARIOS[self.name][0]

    def apply(self) -> ToolRunConfig:
        return ToolRunConfig.named(self.name)


FAULTS: dict[str, ToolFault] = {f.name: f for f in (
    ToolFault("extra_field", "arguments merged after parsing (grammar bypassed)", "t03"),
    ToolFault("not_json", "proposal bytes cut short on the way to the parser", "t02"),
    ToolFault("confirmation_mismatch", "runtime (arguments edited after approval)", "t07"),
    ToolFault("tampered_digest", "confirmation store", "t07"),
    ToolFault("unauthorized", "authorisation policy", "t05"),
    ToolFault("timeout_before_commit", "transport / calendar service", "t09"),
    ToolFault("response_lost_after_commit", "transport", "t09"),
    ToolFault("retry_budget_exhausted", "calendar service (unavailable)", "t09"),
    ToolFault("query_unavailable", "transport and the service's lookup (unreachable)", "t09"),
    ToolFault("cancel_after_commit", "user (cancel after the commit boundary)", "t10"),
    ToolFault("new_key_second_attempt", "runtime retry policy (new idempotency key)", "t09"),
    ToolFault("crash_after_service_commit", "runtime process (crash; recovered from the journal)", "t09"),
    ToolFault("crash_after_journal_write", "runtime process (crash; recovered from the journal)", "t09"),
)}


def faulty_config(name: str | None) -> ToolRunConfig:
    """The configuration of fault ``name`` (None: the golden happy path)."""
    if name is None:
        return ToolRunConfig()
    if name not in FAULTS:
        raise ValueError(f"unknown tool fault {name!r}; expected one of {list(FAULTS)}")
    return FAULTS[name].apply()
