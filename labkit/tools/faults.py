"""The named faults of trace three, each a change of ``ToolRunConfig`` (its ``faults``, read at the seams
of ``labkit.tools.seams``, or its crash plans); golden traces ``fixtures/traces/tool-NAME.jsonl``.  Most
change the branch the runtime takes: their first divergence is an event type where it refuses or fails.
"""

from labkit.core import faults as suspects
from labkit.core.faults import Fault, FirstDivergence, catalogue, configure
from labkit.tools.config import ToolRunConfig
from labkit.tools.executor import CrashPlan

#: what the golden run (no fault) is
HAPPY = "the §7.10–7.14 fixture: one proposal, one approval, one commit, one summary"


def _branch(event_id: str, suspect: str) -> FirstDivergence:
    """The run takes another branch at ``event_id``: another event type there."""
    return FirstDivergence(event_id, "event_type_and_parent", "event_type", suspect)


FAULTS = catalogue(
    # §7.15: the field is injected after decoding: t01's bytes are the model's own, t02 records
    # the proposal the runtime holds (with notify_all), and t03 rejects it
    Fault(
        "extra_field",
        "notify_all is injected into the parsed proposal after decoding, past the grammar",
        {"faults": {"proposal_tamper": "extra_field"}},
        FirstDivergence("t02", "discrete_state", "keys", suspects.ARGUMENTS_PAST_GRAMMAR),
    ),
    Fault(
        "not_json",
        "the proposal bytes reach the parser cut short and do not parse",
        {"faults": {"proposal_tamper": "not_json"}},
        _branch("t02", suspects.PROPOSAL_BYTES_CUT),
    ),
    Fault(
        "confirmation_mismatch",
        "the approval is for 09:00; the Invocation presented says 10:00",
        {"faults": {"edit_after_approval": (("start", "2026-07-20T10:00:00+08:00"),)}},
        _branch("t07", suspects.CONFIRMATION_BINDING),
    ),
    Fault(
        "tampered_digest",
        "the stored approval's digest was altered in one hex digit",
        {"faults": {"tamper_digest": True}},
        _branch("t07", suspects.CONFIRMATION_BINDING),
    ),
    Fault(
        "unauthorized",
        "the subject holds calendar.read only",
        {"capabilities": ("calendar.read",)},
        _branch("t05", suspects.AUTHORISATION),
    ),
    Fault(
        "timeout_before_commit",
        "the service answers 'not committed' once; retried with the same key",
        {"faults": {"transport_plan": ("not_committed", "deliver")}},
        _branch("t09", suspects.EXTERNAL_SERVICE),
    ),
    Fault(
        "response_lost_after_commit",
        "the service commits but the answer is lost; resolved by query",
        {"faults": {"transport_plan": ("lose_response",)}},
        _branch("t09", suspects.EXTERNAL_SERVICE),
    ),
    Fault(
        "retry_budget_exhausted",
        "the service stays unavailable for the whole retry budget",
        {"faults": {"transport_plan": ("unavailable",) * 3}},
        _branch("t09", suspects.EXTERNAL_SERVICE),
    ),
    Fault(
        "query_unavailable",
        "every answer is lost and every lookup by key fails; the runtime ends in OUTCOME_UNKNOWN with the key to query",
        {"faults": {"transport_plan": ("lose_response",) * 3, "query_plan": ("unavailable",) * 3}},
        _branch("t09", suspects.EXTERNAL_SERVICE),
    ),
    Fault(
        "cancel_after_commit",
        "the user cancels after t09; the event stays, the summary is skipped",
        {"faults": {"cancel_at": "after_commit"}},
        _branch("t10", suspects.REQUEST_LIFECYCLE),
    ),
    Fault(
        "new_key_second_attempt",
        "after a lost answer the runtime retries blindly with a new key",
        {"faults": {"transport_plan": ("lose_response", "deliver"), "new_key_per_attempt": True}},
        _branch("t09", suspects.EXTERNAL_SERVICE),
    ),
    Fault(
        "crash_after_service_commit",
        "the runtime dies after the service committed; the restart queries by key",
        {"crashes": (CrashPlan("after_service_commit"),)},
        _branch("t09", suspects.RUNTIME_CRASH),
    ),
    Fault(
        "crash_after_journal_write",
        "the runtime dies after journaling EXECUTING, before sending; "
        "the restart finds nothing and sends with the same key",
        {"crashes": (CrashPlan("after_journal_write"),)},
        _branch("t09", suspects.RUNTIME_CRASH),
    ),
)

#: the golden run and every fault, as ``labkit trace tool --scenario`` and the fixtures name them
SCENARIOS: tuple[str, ...] = ("happy", *FAULTS)


def faulty_config(name: str | None, base: ToolRunConfig | None = None) -> ToolRunConfig:
    """``base`` (default: the happy path) with fault ``name`` applied (None: unchanged)."""
    return configure(FAULTS, "tool", name, base or ToolRunConfig())
