"""One torture run (``run_torture``, which is ``python -m harness``): crash schedules until
``kills`` kills, then ``races`` rounds of racing clients, summed up in a ``TortureReport``.

Children start with ``forkserver`` where the platform has it (a fork, not a fresh interpreter) and
``spawn`` elsewhere.  The stores live in a fresh temporary directory, in memory (``/dev/shm``) when
there is one: a SIGKILL loses nothing the process had handed to the operating system, so fsyncs (which
guard against a power cut, not a kill) would only slow it.  ``pick_recovered``, ``timeline`` and
``journal_rows`` let a reader follow one killed-and-recovered execution.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
import tempfile
from collections import Counter
from contextlib import chdir, nullcontext
from dataclasses import dataclass, field
from multiprocessing import forkserver
from pathlib import Path

from harness.crashes import ScheduleRun, crash_runs
from harness.races import run_races
from harness.workload import RUNTIMES, SERVICES, named
from labkit.core.guards import is_integer
from labkit.tools.invariants import INVARIANTS, Snapshot, asked, key_prefix, race_checks
from labkit.tools.states import State

BOOK = str(Path(__file__).resolve().parents[1])  # the folder that holds harness/


def context(start_method: str | None = None):
    """The multiprocessing context the harness starts its children with."""
    methods = multiprocessing.get_all_start_methods()
    method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
    if method not in methods:
        raise ValueError(f"start_method must be one of {methods}, got {method!r}")
    ctx = multiprocessing.get_context(method)
    # the children import the harness by name: its folder (the book's clone) must be on their path,
    # also when a page loaded it with import_from_book (the fork server and spawn copy sys.path)
    if BOOK not in sys.path:
        sys.path.append(BOOK)
    if method == "forkserver":
        ctx.set_forkserver_preload(["harness.preload", "harness.races"])
        # the fork server imports those by name before it takes the children's path, and drops one it cannot
        # import: started in the book's folder it finds them from any folder (a page's kernel runs in its own),
        # so no child pays for those imports again (≈ 0.5 s each)
        with chdir(BOOK):
            forkserver.ensure_running()
    return ctx


def scratch_dir() -> tempfile.TemporaryDirectory:
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="labkit-torture-", dir=shm, ignore_cleanup_errors=True)


@dataclass
class TortureReport:
    """What a run counted, per invariant its checks and violations; ``lines()`` prints it, ``ok`` says all held."""

    seed: int
    service: str
    runtime: str
    clients: int
    races: int
    runs: list[ScheduleRun] = field(default_factory=list)
    race_results: list[dict] = field(default_factory=list)
    checks: Counter = field(default_factory=Counter)
    violations: list[tuple[str, str]] = field(default_factory=list)
    schedules: int = 0
    kills: int = 0  # before a counted statement or on a timer
    timer_kills: int = 0
    restarts: int = 0
    settled: int = 0  # OUTCOME_UNKNOWN endings a later query settled

    def add(self, run: ScheduleRun) -> None:
        """Count in one crash schedule's run: its kills, restarts, checks and violations."""
        self.runs.append(run)
        self.schedules += 1
        self.kills += run.kills
        self.timer_kills += run.kills if run.schedule.timed else 0
        self.restarts += len(run.incarnations) - 1
        self.settled += run.settle is not None
        self.checks.update(run.checks)
        self.violations += run.violations

    @property
    def ok(self) -> bool:
        return not self.violations

    def invariant_rows(self) -> list[list]:
        """[invariant, checks, violations] for every invariant."""
        found = Counter(name for name, _ in self.violations)
        return [[name, self.checks[name], found[name]] for name in INVARIANTS]

    def lines(self, examples: int = 3) -> list[str]:
        same_key = sum(r["invocation_id"].startswith("race") for r in self.race_results)
        out = [
            f"torture: seed {self.seed}, service {self.service}, runtime {self.runtime}",
            f"crash schedules {self.schedules}: {self.kills} kills (SIGKILL), {self.timer_kills} of them on a timer, "
            f"{self.restarts} restarts, {self.settled} later queries settled an OUTCOME_UNKNOWN",
            f"races {self.races} rounds x {self.clients} clients: {same_key} same-key requests, "
            f"{len(self.race_results) - same_key} with their own keys",
            f"{'invariant':24s} {'checks':>7s} {'violations':>10s}",
        ]
        out += [f"{name:24s} {checks:7d} {bad:10d}" for name, checks, bad in self.invariant_rows()]
        out += [f"  {name}: {text}" for name, text in self.violations[:examples]]
        out.append("all invariants held" if self.ok else f"{len(self.violations)} violations")
        return out


def run_torture(
    kills: int = 200,
    clients: int = 3,
    races: int = 50,
    seed: int = 0,
    *,
    service: str = "idempotent",
    runtime: str = "journal_first",
    start_method: str | None = None,
    root: str | Path | None = None,
    timer_kills: int = 0,
    interleave: bool = False,
) -> TortureReport:
    """Kill the runtime ``kills`` times before a counted statement and ``timer_kills`` times on a
    timer across seeded crash schedules, then race ``clients`` clients for ``races`` rounds (``interleave``:
    two clients, interleaved at the service's seams, ``harness.races``); check every
    invariant.  ``root`` keeps the files there."""
    checked = (("kills", kills, 0), ("timer_kills", timer_kills, 0), ("clients", clients, 1), ("races", races, 0))
    for name, value, low in checked:
        if not is_integer(value) or value < low:  # True is not a count
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    named(SERVICES, "service", service)  # a clear error for an unknown name, before any child starts
    named(RUNTIMES, "runtime", runtime)
    if interleave and clients != 2:
        raise ValueError(f"deterministic interleavings take exactly 2 clients, got clients={clients}")
    ctx, variant = context(start_method), {"service": service, "runtime": runtime}
    report, keep = TortureReport(seed, service, runtime, clients, races), root is not None
    with nullcontext(root) if keep else scratch_dir() as where:
        statement_runs = crash_runs(ctx, kills, seed, Path(where) / "crashes", variant, keep)
        timer_runs = crash_runs(ctx, timer_kills, seed, Path(where) / "timer", variant, keep, timed=True)
        for run in itertools.chain(statement_runs, timer_runs):
            report.add(run)
        if races:
            results, errors, snap = run_races(
                ctx, clients, races, Path(where) / "races", variant, interleave=interleave
            )
            report.race_results = results
            for name, problems in race_checks(results, errors, snap).items():
                report.checks[name] += 1
                report.violations += [(name, f"races: {p}") for p in problems]
    return report


def pick_recovered(runs: list[ScheduleRun]) -> tuple[ScheduleRun, str, int]:
    """(run, invocation ID, index of the incarnation killed in limbo — EXECUTING in the journal while
    the calendar holds its event) of the first such kill whose invocation then ended COMMITTED,
    preferring one whose killed incarnation had sent that invocation's request once and nothing
    else; ValueError if the runs hold none."""
    found = [
        (run, inv, index)
        for run in runs
        for index, here in enumerate(run.incarnations)
        if here.ending == "killed"
        for inv, state in here.snapshot.states().items()
        if state == State.EXECUTING.value
        and here.snapshot.events_for(key_prefix(inv))
        and run.incarnations[-1].snapshot.states().get(inv) == State.COMMITTED.value
    ]
    if not found:
        raise ValueError(
            f"none of the {len(runs)} schedules was killed between a service commit and its journal "
            f"record; expected at least one (run more kills)"
        )
    simple = [(run, inv, index) for run, inv, index in found if asked(run.incarnations[index].ops, inv) == ["send"]]
    return (simple or found)[0]


def timeline(run: ScheduleRun, invocation_id: str) -> list[list]:
    """[incarnation, mode, how it ended, its requests and queries for the invocation,
    the journaled state after it, the calendar's events for the invocation after it]."""
    rows, prefix = [], key_prefix(invocation_id)
    for number, here in enumerate(run.incarnations + ([run.settle] if run.settle else []), start=1):
        ended = here.ending
        if here.ending == "killed" and here.sql:
            ended = f"killed before statement {here.statements}: {here.sql.split(' ')[0]}"
        elif here.ending == "killed":
            ended = f"killed on a timer after {here.kill_after * 1000:.0f} ms"
        state, events = here.snapshot.states()[invocation_id], here.snapshot.events_for(prefix)
        ops = [f"{kind} {key.rsplit(':', 1)[-1]}" for kind, key in here.ops if key.startswith(prefix)]
        rows.append([number, here.mode, ended, ", ".join(ops) or "—", state, ", ".join(events) or "none"])
    return rows


def journal_rows(snap: Snapshot, invocation_id: str) -> list[list]:
    """[seq, from, to, idempotency key or event ID] of the invocation's journaled transitions."""
    return [
        [t["seq"], t["from"], t["to"], t["detail"].get("event_id") or t["detail"].get("idempotency_key") or "—"]
        for t in snap.transitions
        if t["invocation_id"] == invocation_id
    ]
