"""Kill, restart, recover, repeat: the runtime's execute path under SIGKILL at random statements.

A ``CrashSchedule`` (drawn from a seeded ``random.Random``) fixes a small workload — 1–3
approved invocations, maybe one still waiting for its confirmation, a retry budget — and, per
incarnation, the network's outcomes and when the harness kills it: before a counted SQL
statement, or (``timed``) a drawn number of seconds after it is ready, wherever it is then —
how a real machine dies.  Statement kills are fixed by the seed; timer kills depend on the
machine's speed, and a timer that fires after the incarnation finished kills nothing.

``run_schedule`` prepares the stores in a fresh directory, starts the first incarnation
(``mode="execute"``) and after every kill a restart (``mode="recover"``) until one finishes; an
OUTCOME_UNKNOWN left by a spent budget is then settled by a later restart on a healthy network.
After every kill it checks the files as they were left (every event authorised, every file
intact), at every restart that it asked by key before it sent, and at the end everything.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.workload import (
    CLOCK,
    JOURNAL_FILE,
    SERVICE_FILE,
    VARIANT,
    approve,
    incarnation,
    make_invocation,
    start_child,
)
from labkit.tools import invariants as inv
from labkit.tools.calendar_service import OUTCOMES, QUERY_OUTCOMES, CalendarService
from labkit.tools.invariants import Snapshot, take
from labkit.tools.journal import Journal
from labkit.tools.states import State

#: the network of one incarnation: mostly delivered, every fault of ServiceTransport possible
NETWORK = ("deliver",) * 4 + OUTCOMES
#: statements one invocation's first execution begins, roughly: kill points are drawn below
STATEMENTS_PER_INVOCATION = 40
#: a timer kill fires uniformly within this many seconds per invocation after the child is ready
TIMER_SECONDS = 0.012
#: seconds the harness waits for a word from a child before it calls it hung
WAIT_SECONDS = 120.0


@dataclass(frozen=True)
class CrashSchedule:
    number: int
    approved: int
    unapproved: int
    retry_budget: int
    kills: tuple[int | float, ...]  # the statement each killed incarnation dies before (timed: its seconds)
    plans: tuple[tuple[str, ...], ...]  # network outcomes, one plan per incarnation
    query_plans: tuple[tuple[str, ...], ...]
    timed: bool = False


def draw_schedule(rng: random.Random, number: int, timed: bool = False) -> CrashSchedule:
    approved, unapproved = rng.randint(1, 3), int(rng.random() < 0.25)
    if timed:
        kills = tuple(rng.uniform(0, TIMER_SECONDS * approved) for _ in range(rng.randint(2, 6)))
    else:
        kills = tuple(rng.randint(1, STATEMENTS_PER_INVOCATION * approved) for _ in range(rng.randint(2, 6)))
    plans = tuple(tuple(rng.choice(NETWORK) for _ in range(rng.randint(0, 3))) for _ in range(len(kills) + 1))
    queries = tuple(tuple(rng.choice(QUERY_OUTCOMES) for _ in range(rng.randint(0, 2))) for _ in range(len(kills) + 1))
    return CrashSchedule(number, approved, unapproved, rng.randint(1, 3), kills, plans, queries, timed)


@dataclass
class Incarnation:
    mode: str
    kill_after: float | None = None  # a timer kill: seconds after the child was ready
    ending: str = "error"  # killed | done | refused | error
    statements: int | None = None  # where it was killed, or how many it ran (None: killed on a timer)
    sql: str | None = None  # the statement it was killed before
    ops: list = field(default_factory=list)
    detail: str | None = None
    snapshot: Snapshot | None = None  # the files right after it ended
    exitcode: int | None = None  # -9 (SIGKILL) for a killed child on POSIX


def run_child(ctx, job: dict) -> Incarnation:
    """Start one incarnation in a child process; kill it (SIGKILL) when it halts at its kill point,
    or when its timer (``job["kill_after"]`` seconds after it reported ready) runs out."""
    here = Incarnation(job["mode"], job.get("kill_after"))
    ours, proc = start_child(ctx, incarnation, job)
    deadline = None
    try:
        while True:
            wait = WAIT_SECONDS if deadline is None else max(deadline - time.monotonic(), 0.0)
            if not ours.poll(wait):
                proc.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
                if deadline is None:
                    here.detail = f"no word from the child for {WAIT_SECONDS:g} s"
                else:
                    here.ending = "killed"
                    _drain(ours, here)  # what it reported before it died
                break
            try:
                message = ours.recv()
            except EOFError:
                here.detail = "the child died without a word"
                break
            if message[0] == "ready":
                deadline = time.monotonic() + job["kill_after"]
            elif message[0] == "halt":
                proc.kill()
                here.ending, here.statements, here.sql = "killed", message[1], message[2]
                break
            elif _heard(here, message):
                break
    finally:
        ours.close()
        proc.join()
    here.exitcode = proc.exitcode
    return here


def _heard(here: Incarnation, message: tuple) -> bool:
    """Note one message of the child; True when it was its last word (done, refused or error)."""
    if message[0] == "op":
        here.ops.append(tuple(message[1:]))
        return False
    here.ending = message[0]
    here.statements = message[1] if message[0] == "done" else None
    here.detail = None if message[0] == "done" else message[1]
    return True


def _drain(ours, here: Incarnation) -> None:
    """Read what a child killed on a timer had already sent; a "done" among it means the timer came too late."""
    with contextlib.suppress(EOFError, OSError):
        while ours.poll(0) and not _heard(here, ours.recv()):
            pass


@dataclass
class ScheduleRun:
    schedule: CrashSchedule
    incarnations: list[Incarnation] = field(default_factory=list)
    settle: Incarnation | None = None
    checks: Counter = field(default_factory=Counter)
    violations: list[tuple[str, str]] = field(default_factory=list)

    def check(self, name: str, problems: list[str]) -> None:
        self.checks[name] += 1
        self.violations += [(name, f"schedule {self.schedule.number}: {p}") for p in problems]

    @property
    def kills(self) -> int:
        return sum(i.ending == "killed" for i in self.incarnations)


def prepare(schedule: CrashSchedule, where: Path) -> None:
    where.mkdir(parents=True, exist_ok=False)
    journal = Journal(where / JOURNAL_FILE)
    for i in range(schedule.approved + schedule.unapproved):
        invocation = make_invocation(f"s{schedule.number}i{i}", minute=i)
        approve(journal, invocation, schedule.retry_budget, approved=i < schedule.approved)
    journal.close()
    CalendarService(CLOCK, path=str(where / SERVICE_FILE)).db.close()


def run_schedule(ctx, schedule: CrashSchedule, where: Path, variant: dict = VARIANT) -> ScheduleRun:
    prepare(schedule, where)
    files = ([where / JOURNAL_FILE], where / SERVICE_FILE)
    run, base = ScheduleRun(schedule), {"dir": str(where), **variant}
    for number, kill in enumerate(schedule.kills + (None,)):
        job = {
            **base,
            "mode": "recover" if number else "execute",
            "kill_after" if schedule.timed else "kill_at": kill,
            "plan": schedule.plans[number],
            "query_plan": schedule.query_plans[number],
        }
        here = run_child(ctx, job)
        here.snapshot = take(*files)
        if number:
            before = run.incarnations[-1].snapshot.states()
            run.check("restart_queries_first", inv.restart_queries_first(before, here.ops))
        run.incarnations.append(here)
        run.check("runtime_ran", [] if here.ending in ("killed", "done") else [f"{here.ending}: {here.detail}"])
        if here.ending != "killed":
            break
        run.check("events_authorised", inv.events_authorised(here.snapshot))  # as the kill left them
        run.check("integrity", inv.integrity(here.snapshot))
    final = run.incarnations[-1].snapshot
    if State.OUTCOME_UNKNOWN.value in final.states().values():
        run.settle = run_child(ctx, {**base, "mode": "settle", "kill_at": None})
        run.settle.snapshot = take(*files)
        run.check("unknown_settled", inv.unknown_settled(final, run.settle.snapshot, run.settle.ops))
        final = run.settle.snapshot
    for name, problems in inv.run_checks(final).items():
        run.check(name, problems)
    return run


def crash_runs(ctx, kills: int, seed: int, root: Path, variant=VARIANT, keep: bool = False, timed: bool = False):
    """Schedules drawn from ``seed`` until ``kills`` incarnations were killed (``timed``: on a
    timer), or until an incarnation fails with an error; yields each ScheduleRun (``keep``: and keeps its files)."""
    rng, killed, number = random.Random(seed), 0, 0
    while killed < kills:
        where = root / f"schedule-{number:05d}"
        run = run_schedule(ctx, draw_schedule(rng, number, timed), where, variant)
        if not keep:
            shutil.rmtree(where, ignore_errors=True)
        killed += run.kills
        number += 1
        yield run
        if any(here.ending == "error" for here in run.incarnations):
            return  # the runtime itself fails: more schedules would never reach their kills
