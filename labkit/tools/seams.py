"""Where trace three crosses a boundary, and what is consulted there (as ``DecoderFaults`` is by
``Decoder.decode``): the phases and the executor call a seam; only the seam knows what can go wrong.

========================  ==========================================  ===============================
seam                      the sound run                               a fault (``ToolFaults`` field)
========================  ==========================================  ===============================
decoder → parser          the decoder's bytes                         ``proposal_tamper="not_json"``
parser → validator        the parsed arguments                        ``proposal_tamper="extra_field"``
the approval store        the digest the user approved                ``tamper_digest``
presented for execution   the Invocation approved                     ``edit_after_approval``
the client                no cancel                                   ``cancel_at``
the transport             every request and query delivered           ``transport_plan``, ``query_plan``
the key policy            one key per request, a query after doubt    ``new_key_per_attempt``
the journal order         journal, then send                          ``journal_before_send=False``
========================  ==========================================  ===============================

The crash points are the executor's own seams (``labkit.tools.executor.CrashPlan``).
"""

from collections.abc import Callable
from dataclasses import dataclass

from labkit.tools.calendar_service import ServiceTransport
from labkit.tools.normalize import Invocation

TAMPERS = (None, "extra_field", "not_json")
CANCELS = ("none", "before_execute", "after_commit")


def idempotency_key(request_id: str, attempt: int = 1) -> str:
    """The idempotency key of a request's ``attempt`` (§7.13: the sound policy sends attempt 1's key every time)."""
    return f"{request_id}:create-event:{attempt}"


@dataclass(frozen=True)
class ExecutionPolicy:
    """How the executor names its requests and orders journal and send; the defaults are the rules,
    each other value is a broken policy that shows what the rule protects."""

    #: a new key per attempt, and a blind retry after an unknown outcome (the calendar may get two events)
    new_key_per_attempt: bool = False
    #: ``False``: the request leaves before the journal records the attempt (a kill between leaves an
    #: event no journal record authorised)
    journal_before_send: bool = True

    def key(self, request_id: str, attempt: int) -> str:
        return idempotency_key(request_id, attempt if self.new_key_per_attempt else 1)

    def after_unknown(self, query: Callable, assume_not_committed: Callable):
        """After an attempt whose outcome nobody knows: query by the same key, or assume and retry."""
        return assume_not_committed() if self.new_key_per_attempt else query()

    def send(self, journal: Callable[[], None], send: Callable[[], dict]) -> dict:
        """Journal the attempt and send it, in this policy's order."""
        if self.journal_before_send:
            journal()
            return send()
        try:
            return send()
        finally:
            journal()


@dataclass(frozen=True)
class ToolFaults:
    """What goes wrong in one run of trace three, each switch read at one seam (all off: the happy run)."""

    proposal_tamper: str | None = None  # "extra_field" | "not_json"
    tamper_digest: bool = False  # the approval store holds another digest (last hex digit flipped)
    edit_after_approval: tuple[tuple[str, str], ...] = ()  # argument → value of the Invocation presented
    cancel_at: str = "none"  # "before_execute" | "after_commit": the user cancels there
    transport_plan: tuple[str, ...] = ()  # per attempt: labkit.tools.calendar_service.OUTCOMES
    query_plan: tuple[str, ...] = ()  # per query by key: "answer" | "unavailable"
    new_key_per_attempt: bool = False

    def __post_init__(self):
        for switch, known in (("proposal_tamper", TAMPERS), ("cancel_at", CANCELS)):
            if getattr(self, switch) not in known:
                raise ValueError(f"{switch} must be one of {list(known)}, got {getattr(self, switch)!r}")

    def parser_input(self, generated: bytes) -> bytes:
        """The bytes the parser receives: the decoder's own, or (``not_json``) their first half."""
        return generated[: len(generated) // 2] if self.proposal_tamper == "not_json" else generated

    def parsed(self, arguments: dict) -> dict:
        """The arguments handed to validation (``extra_field``: notify_all added past the grammar)."""
        return {**arguments, "notify_all": True} if self.proposal_tamper == "extra_field" else arguments

    def stored_approval(self, digest: str) -> str:
        """The digest the approval store returns for an approval of ``digest``."""
        return digest[:-1] + ("1" if digest[-1] == "0" else "0") if self.tamper_digest else digest

    def presented(self, approved: Invocation) -> Invocation:
        """The Invocation presented for execution: the approved one, or an edited copy (a new ID)."""
        edits = dict(self.edit_after_approval)
        return approved.with_arguments("inv_02", **edits) if edits else approved

    def cancels(self, moment: str) -> bool:
        """Does the user cancel at ``moment`` (one of ``CANCELS``)?"""
        return self.cancel_at == moment

    def transport(self, service) -> ServiceTransport:
        """The transport to ``service``, delivering as the plans say."""
        return ServiceTransport(service, self.transport_plan, self.query_plan)

    @property
    def policy(self) -> ExecutionPolicy:
        return ExecutionPolicy(new_key_per_attempt=self.new_key_per_attempt)
