"""Deterministic interleavings: the race the race phase exists for is caught in every run, not by luck.

``run_races(..., interleave=True)`` stops client 0 at each labelled seam of the service's critical
section in turn and lets client 1 send the same key right there.  The broken service whose lookup and
first execution are two transactions (``split_transactions``, a fixture beside ``no_idempotency``)
must book the key twice in each of 20 runs; the sound one must block the probe at every seam.
"""

from pathlib import Path

import pytest

from harness.races import SEAMS, run_races
from harness.report import context, run_torture, scratch_dir
from labkit.tools.invariants import race_checks

# Slow tier (child processes): out of `make test-fast`, in `make test`.
pytestmark = pytest.mark.slow

SPLIT = {"service": "split_transactions", "runtime": "journal_first"}


@pytest.fixture(scope="module")
def ctx():
    return context()


@pytest.fixture
def where():
    """A fresh folder in memory (/dev/shm) where there is one, as the torture run's: no fsync waits."""
    with scratch_dir() as folder:
        yield Path(folder)


def test_the_split_transaction_service_is_caught_in_each_of_20_runs(ctx, where):
    for run in range(20):
        results, errors, snap = run_races(ctx, 2, len(SEAMS), where / f"run{run}", SPLIT, interleave=True)
        problems = race_checks(results, errors, snap)
        assert problems["runtime_ran"] == [], (run, problems["runtime_ran"])
        doubled = [p for p in problems["one_commit_per_key"] if "req-race001:create-event:1: 2 events" in p]
        assert doubled, (run, problems["one_commit_per_key"])
        probes = [r["interleaved"] for r in results if "interleaved" in r]
        assert probes[1] == {"seam": "before_perform", "probe": "ok"}, (run, probes)


def test_the_sound_service_blocks_the_probe_at_every_seam_and_keeps_every_promise(ctx, where):
    variant = {"service": "idempotent", "runtime": "journal_first"}
    results, errors, snap = run_races(ctx, 2, 5, where / "sound", variant, interleave=True)
    assert all(p == [] for p in race_checks(results, errors, snap).values()), race_checks(results, errors, snap)
    probes = [r["interleaved"] for r in results if "interleaved" in r]
    assert probes == [{"seam": SEAMS[n % 3], "probe": "blocked"} for n in range(5)], probes
    assert any(r["state"] == "FAILED" for r in results), "round 4's other digest is refused"


def test_random_races_still_run_and_interleavings_take_two_clients(ctx, where):
    report = run_torture(kills=0, clients=3, races=3, seed=1)
    assert report.ok and len(report.race_results) == 18
    with pytest.raises(ValueError, match="exactly 2 clients, got clients=3"):
        run_torture(kills=0, clients=3, races=1, interleave=True)
    assert run_torture(kills=0, clients=2, races=3, interleave=True, service="split_transactions").violations
