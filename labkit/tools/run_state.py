"""What one run of trace three carries from phase to phase (``RunState``) and leaves behind
(``ToolTrace``).  The phases are ``labkit.tools.phases`` (up to the confirmation) and
``labkit.tools.commit_phases`` (the commit boundary and after).
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.events import TraceRecorder
from labkit.core.runtime import Config
from labkit.tools.calendar_service import CalendarService
from labkit.tools.calls import ModelCall
from labkit.tools.confirm import Confirmation
from labkit.tools.executor import Executor
from labkit.tools.hooks import ToolHooks
from labkit.tools.journal import Journal
from labkit.tools.normalize import Invocation
from labkit.tools.states import InvocationMachine, State
from labkit.tools.toolspec import ToolSpec


@dataclass
class ToolTrace:
    """What a run leaves behind: events, the machine, the Invocation(s), the service."""

    config: Config  # labkit.tools.runtime.ToolRunConfig
    events: list[dict]
    machine: InvocationMachine
    first_call: ModelCall | None
    second_call: ModelCall | None = None
    arguments_bytes: bytes = b""
    invocation: Invocation | None = None
    confirmation: Confirmation | None = None
    service: CalendarService | None = None
    journal: Journal | None = None
    executor: Executor | None = None
    request_status: str = ""
    answer: str | None = None

    @property
    def final_state(self) -> str:
        return self.machine.state.value


@dataclass
class RunState:
    """What the phases of one run share: the recorder, the pieces, the trace being filled,
    and the values one phase hands to the next."""

    rec: TraceRecorder
    trace: ToolTrace
    spec: ToolSpec
    decoder: object
    hooks: ToolHooks
    artifacts: dict
    arguments: dict | None = None
    presented: Invocation | None = None
    result: dict | None = None
    tool_message: dict | None = None
    restarts: int = 0

    @property
    def config(self):
        return self.trace.config

    def move(self, state: State) -> None:
        """The Invocation's next state, authorised by the event about to be recorded."""
        self.trace.machine.move(state, self.rec.next_event_id())

    @property
    def state(self) -> str:
        return self.trace.machine.state.value
