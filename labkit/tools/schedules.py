"""Random fault schedules for the execution half of trace three (no model needed).

A ``FaultSchedule`` fixes what can go wrong after the proposal (transport and lookup outcomes, crashes at
any crash point, a cancellation, the budget, a missing capability, a mismatched confirmation);
``run_schedule`` runs the happy run's own phases from t05 on (``labkit.tools.phases.EXECUTION``) on the
§7.12 Invocation, and ``invariant_violations`` checks the promises of ``labkit.tools.invariants``.
"""

from dataclasses import dataclass

from labkit.core.runtime import run_steps
from labkit.tools import invariants
from labkit.tools.config import ToolHooks, ToolRunConfig, ToolTrace, start_trace
from labkit.tools.executor import CrashPlan
from labkit.tools.fixture import fixture_invocation
from labkit.tools.phases import EXECUTION
from labkit.tools.seams import CANCELS, ToolFaults
from labkit.tools.states import InvocationMachine, State


@dataclass(frozen=True)
class FaultSchedule:
    transport_plan: tuple[str, ...] = ()
    query_plan: tuple[str, ...] = ()
    crashes: tuple[CrashPlan, ...] = ()
    cancel: str = "none"
    retry_budget: int = 3
    authorized: bool = True
    confirmation_matches: bool = True

    def __post_init__(self):
        if self.cancel not in CANCELS:
            raise ValueError(f"cancel must be one of {list(CANCELS)}, got {self.cancel!r}")
        self.config()  # ToolRunConfig refuses a retry budget under one attempt

    def config(self) -> ToolRunConfig:
        """The happy run's config with this schedule's faults."""
        happy = ToolRunConfig()
        plans = {"transport_plan": self.transport_plan, "query_plan": self.query_plan}
        faults = ToolFaults(tamper_digest=not self.confirmation_matches, cancel_at=self.cancel, **plans)
        capabilities = happy.capabilities if self.authorized else happy.capabilities[:1]
        return ToolRunConfig(
            capabilities=capabilities, retry_budget=self.retry_budget, faults=faults, crashes=self.crashes
        )


def run_schedule(schedule: FaultSchedule, *, service_execute=None) -> ToolTrace:
    """Authorise, confirm, execute and recover the §7.12 Invocation under ``schedule`` (never a ``Crash``)."""
    config, invocation = schedule.config(), fixture_invocation()
    hooks = ToolHooks(service_execute=service_execute)
    run = start_trace(config, hooks, InvocationMachine(State.VALIDATED), invocation=invocation)
    run.machine.attach(run.journal, invocation.to_json(), config.retry_budget)
    run.request_status = run_steps(EXECUTION, run) or "completed"
    return run


def invariant_violations(outcome: ToolTrace) -> list[str]:
    """Every broken promise of a schedule's run (empty: all kept), as "invariant: what broke"."""
    snap = invariants.read([outcome.journal.db.db], outcome.service.db.db)
    config = outcome.config
    granted = outcome.invocation.required_capability in config.capabilities
    approved = granted and not (config.faults.tamper_digest or config.faults.cancels("before_execute"))
    checks = {**invariants.run_checks(snap), "ending": invariants.ending(snap, outcome, approved)}
    return [f"{name}: {problem}" for name, problems in checks.items() for problem in problems]
