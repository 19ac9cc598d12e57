"""Trace three under real crashes and racing clients: one torture run and its figures.

``torture_run(kills, races)`` runs ``harness.report.run_torture`` once (seed 0,
3 clients) and reports its counts, its violations (0 expected) and its wall time.  The full
benchmark kills the runtime 2,000 times and races 200 rounds; ``--quick`` does the bounded
run of ``make test`` (200 kills, 50 rounds).
"""

from __future__ import annotations

import time

FULL = {"kills": 2000, "races": 200}
QUICK = {"kills": 200, "races": 50}
CLIENTS = 3


#: a run's figures, in the order the result lists them after ``available`` and ``reason``
FIGURES = (
    "kills",
    "schedules",
    "restarts",
    "settled",
    "races",
    "clients",
    "race_requests",
    "checks",
    "violations",
    "wall_seconds",
)


def unavailable(reason: str) -> dict:
    return {"available": False, "reason": reason, **dict.fromkeys(FIGURES)}


def torture_run(kills: int, races: int, seed: int = 0) -> dict:
    from harness.report import run_torture

    started = time.perf_counter()
    report = run_torture(kills=kills, clients=CLIENTS, races=races, seed=seed)
    return {
        "available": True,
        "reason": None,
        "kills": report.kills,
        "schedules": report.schedules,
        "restarts": report.restarts,
        "settled": report.settled,
        "races": report.races,
        "clients": report.clients,
        "race_requests": len(report.race_results),
        "checks": sum(report.checks.values()),
        "violations": len(report.violations),
        "wall_seconds": time.perf_counter() - started,
    }
