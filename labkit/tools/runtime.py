"""Trace three, run: two model calls around a confirmed, idempotent calendar write (t00–t14).

``run_tool_trace(ToolRunConfig())`` computes everything on the spot: the 86-token prompt,
the prefill of toy-tool-decoder-v1, the grammar-masked greedy decode of the 27 proposal
tokens, parse → validate → normalize → authorize → confirm → execute → observe on the
state machine, the calendar service's commit, and the second call that reuses the first
call's prefix cache before it writes the summary.  Every step is one event of the trace:
the run is ``PHASES`` of ``labkit.tools.phases`` on one ``ToolTrace`` (``labkit.tools.run_state``).
A fault is a change of the frozen ``ToolRunConfig``'s ``faults`` (``labkit.tools.faults``), read at its seam
(``labkit.tools.seams``).
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.core.runtime import Config, checked_run_arguments, run_steps
from labkit.tools.model import CONFIG, load_decoder
from labkit.tools.normalize import Invocation, normalize
from labkit.tools.phases import PHASES, close_trace
from labkit.tools.run_state import ToolHooks, ToolTrace, start_trace
from labkit.tools.seams import ToolFaults
from labkit.tools.tokenizer import TEMPLATE_ID, TOKENIZER_ID
from labkit.tools.toolspec import ToolSpec, find_tool, load_toolspec

USER_TEXT = "明天上午九点提醒我带护照，提交前让我确认。"
STRATEGY = "greedy_with_json_grammar"  # §7.10; what runs in mc_01 (mc_02: ANSWER_STRATEGY)


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
        """The Invocation inv_01 that validated ``arguments`` normalise to under this run's clock,
        timezone and subject (§7.12)."""
        return normalize(
            spec, arguments, invocation_id="inv_01", clock=self.clock, tz_name=self.timezone, subject=self.subject
        )

    def __post_init__(self):
        if self.retry_budget < 1:
            raise ValueError(f"retry_budget must be >= 1 attempt, got {self.retry_budget}")
        if not isinstance(self.faults, ToolFaults):
            raise ValueError(f"faults must be a ToolFaults, got {type(self.faults).__name__}")


def run_tool_trace(
    config: ToolRunConfig | None = None, hooks: ToolHooks | None = None, *, decoder=None, spec: ToolSpec | None = None
) -> ToolTrace:
    """Run trace three under ``config``; returns the events t00… and everything computed.

    ``hooks`` (``labkit.tools.run_state.ToolHooks``) substitutes pieces of the runtime (the
    grammar mask, the digest binding test, the prefix reuse, the service's idempotent
    execute) — how the book's exercises run a reader's function inside the real runtime.
    ``decoder`` and ``spec`` (default: the fixtures') save loading them again."""
    config, hooks = checked_run_arguments(config, hooks, ToolRunConfig, ToolHooks)
    spec = find_tool(spec or load_toolspec(), config.tool)
    artifacts = {
        "model_id": CONFIG.model_id,
        "template_id": TEMPLATE_ID,
        "tokenizer_id": TOKENIZER_ID,
        "sampler": STRATEGY,
        "tool_version": spec.ref,
    }
    run = start_trace(config, hooks, spec=spec, decoder=decoder or load_decoder(), artifacts=artifacts)
    return close_trace(run, run_steps(PHASES, run) or "completed")
