"""Repeated timing and its summary: every figure is a median with its min and max.

    summarize([0.31, 0.29, 0.30])  → {"median": 0.30, "min": 0.29, "max": 0.31, "runs": 3}
    time_call(fn, repeats=5)       → (summary in seconds, fn's last return value)
    time_command(["labkit", "labs"], repeats=3) → summary of wall seconds of a subprocess

Shared machines are noisy: compare two things by timing them *interleaved* in one run
(``interleaved``) and report their ratio of medians, never a number from another day.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence


def summarize(samples: Sequence[float]) -> dict:
    """Median, min, max and count of ``samples`` (floats, at least one, all finite)."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("samples must hold at least one timing, got an empty sequence")
    bad = [v for v in values if not math.isfinite(v) or v < 0]
    if bad:
        raise ValueError(f"samples must be finite non-negative timings, got {bad[0]!r}")
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def scaled(summary: dict | None, factor: float) -> dict | None:
    """The same summary in another unit (e.g. ``factor=1000`` for seconds → milliseconds)."""
    if summary is None:
        return None
    return {**{k: summary[k] * factor for k in ("median", "min", "max")}, "runs": summary["runs"]}


def ratio(numerator: dict | None, denominator: dict | None) -> float | None:
    """Ratio of two summaries' medians (None when either is missing or the denominator is 0)."""
    if numerator is None or denominator is None or denominator["median"] <= 0:
        return None
    return numerator["median"] / denominator["median"]


def _check_repeats(repeats: int, warmup: int = 0) -> None:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer, got {warmup!r}")


def time_call(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> tuple[dict, object]:
    """Call ``fn()`` ``warmup`` times untimed, then ``repeats`` times timed (perf_counter)."""
    _check_repeats(repeats, warmup)
    result = None
    for _ in range(warmup):
        result = fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return summarize(samples), result


class CommandFailed(RuntimeError):
    """A benchmarked command exited with a non-zero status (its stderr tail is in the message)."""


def run_command(
    argv: Sequence[str], *, cwd=None, env: dict | None = None, timeout: float = 600, ok_codes: tuple[int, ...] = (0,)
) -> float:
    """Run ``argv`` once, return its wall time in seconds; raise ``CommandFailed`` unless it exits
    with one of ``ok_codes``."""
    full_env = None if env is None else {**os.environ, **env}
    start = time.perf_counter()
    done = subprocess.run(list(argv), cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    elapsed = time.perf_counter() - start
    if done.returncode not in ok_codes:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise CommandFailed(f"{' '.join(map(str, argv))} exited with {done.returncode}: " + " | ".join(tail))
    return elapsed


def interleaved(contenders: dict[str, Callable[[], float]], repeats: int) -> dict[str, dict]:
    """Time several contenders side by side: round r runs each one once, in turn.

    Each contender returns its own elapsed seconds (so it may exclude setup it does not
    own). Interleaving spreads the machine's noise evenly over the contenders.
    """
    _check_repeats(repeats)
    if not contenders:
        raise ValueError("contenders must name at least one thing to time")
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            samples[name].append(float(fn()))
    return {name: summarize(values) for name, values in samples.items()}
