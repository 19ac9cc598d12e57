"""Trace three's configuration (``ToolRunConfig``, §7.10), its hooks (``ToolHooks``: a reader's function
in place of a piece of the runtime) and one run of it (``ToolTrace``: what the phases share and leave behind).
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from labkit.core.events import TraceRecorder
from labkit.core.runtime import Config, Hooks, hook
from labkit.tools.calendar_service import CalendarService
from labkit.tools.calls import ModelCall
from labkit.tools.confirm import Confirmation
from labkit.tools.executor import Executor
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation, normalize
from labkit.tools.seams import ToolFaults
from labkit.tools.states import InvocationMachine, State
from labkit.tools.toolspec import ToolSpec

USER_TEXT = "明天上午九点提醒我带护照，提交前让我确认。"


@dataclass(frozen=True)
class ToolRunConfig(Config):
    """Everything a run of trace three depends on (§7.10), plus the scenario's changes."""

    trace_id: str = "trace-tool-001"
    clock: str = "2026-07-19T14:00:00+08:00"
    timezone: str = "Asia/Shanghai"
    subject: str = "user-42"
    capabilities: tuple[str, ...] = ("calendar.read", "calendar.write:primary")
    user_text: str = USER_TEXT
    tool: str = "calendar.create_event@v1"  # the one tool offered (§7.10)
    request_id: str = "req-42"
    service_clock: str = "2026-07-19T14:00:04+08:00"
    retry_budget: int = 3
    #: what goes wrong, each read at its seam (``labkit.tools.seams``; all off on the happy path)
    faults: ToolFaults = ToolFaults()
    crashes: tuple = ()  # labkit.tools.executor.CrashPlans: the first incarnation's, then one per restart
    journal_path: str = ":memory:"  # a file makes the journal survive the process

    def invocation(self, spec: ToolSpec, arguments: dict) -> Invocation:
        """inv_01, ``arguments`` normalised under this run's clock, timezone and subject (§7.12)."""
        return normalize(
            spec, arguments, invocation_id="inv_01", clock=self.clock, tz_name=self.timezone, subject=self.subject
        )

    def __post_init__(self):
        if self.retry_budget < 1:
            raise ValueError(f"retry_budget must be >= 1 attempt, got {self.retry_budget}")
        if not isinstance(self.faults, ToolFaults):
            raise ValueError(f"faults must be a ToolFaults, got {type(self.faults).__name__}")


@dataclass(frozen=True)
class ToolHooks(Hooks):
    """What each substitute replaces is above it; what it takes and returns is its ``hook(...)``."""

    #: ``SchemaGrammar.mask`` in mc_01's decode, given the text so far
    proposal_mask: Callable | None = hook("a function (text) -> allowed [V] bool")
    #: the binding test inside ``check_confirmation``
    digest_matches: Callable | None = hook("a function (confirmation, invocation) -> bool")
    #: ``common_prefix``: how much of mc_01's cache mc_02 reuses
    reusable_prefix: Callable | None = hook("a function (cached_ids, new_ids) -> int")
    #: the idempotency decision of ``CalendarService.create_event`` (desk: a ``calendar_service.ServiceDesk``)
    service_execute: Callable | None = hook("a function (desk, key, request_digest, request) -> response")


@dataclass
class ToolTrace:
    """The recorder, the pieces and what one phase hands the next; after the run, what it left behind."""

    config: ToolRunConfig
    rec: TraceRecorder = field(repr=False)
    events: list[dict] = field(init=False)  # the recorder's
    machine: InvocationMachine
    service: CalendarService
    journal: Journal
    spec: ToolSpec | None = None
    decoder: object = field(default=None, repr=False)
    hooks: ToolHooks = field(default_factory=ToolHooks)
    artifacts: dict = field(default_factory=dict)
    first_call: ModelCall | None = None
    second_call: ModelCall | None = None
    arguments_bytes: bytes = b""
    arguments: dict | None = None
    invocation: Invocation | None = None
    confirmation: Confirmation | None = None
    presented: Invocation | None = None  # the Invocation presented for execution
    executor: Executor | None = None
    result: dict | None = None  # the committed result
    restarts: int = 0
    tool_message: dict | None = None
    request_status: str = ""
    answer: str | None = None

    def __post_init__(self):
        self.events = self.rec.events

    @property
    def state(self) -> str:
        """The Invocation's state (after the run: the state it ended in)."""
        return self.machine.state.value

    final_state = state

    def move(self, state: State) -> None:
        """The Invocation's next state, authorised by the event about to be recorded."""
        self.machine.move(state, self.rec.next_event_id())

    def report(self, component: str, event_type: str, **payload) -> None:
        """Record ``event_type`` (no step); its payload opens with the Invocation's state."""
        self.rec.emit(component, event_type, None, {"state": self.state, **payload})

    def enter(self, state: State, component: str, event_type: str, **payload) -> None:
        """``→ state``, then the event that reports it."""
        self.move(state)
        self.report(component, event_type, **payload)


def start_trace(
    config: ToolRunConfig, hooks: ToolHooks, machine: InvocationMachine | None = None, **pieces
) -> ToolTrace:
    """A fresh run: its recorder, an in-memory calendar service and the journal of ``config.journal_path``."""
    return ToolTrace(
        config,
        TraceRecorder(config.trace_id, prefix="t"),
        machine or InvocationMachine(),
        CalendarService(config.service_clock, execute=hooks.service_execute),
        Journal(config.journal_path),
        hooks=hooks,
        **pieces,
    )
