"""The two JSON reports of chapter 11, with the keys and nesting of the source's:

    labs:   {status, scope, timestamp_shanghai, runtime, elapsed_seconds, labs: {name: object}}
    faults: {status, timestamp_shanghai, runtime, <one key per supplement object>}

A failed lab check (an ``AssertionError``) makes ``"status": "failed"`` naming the lab, not a raise.
"""

import platform
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from functools import partial

import numpy as np

from labkit.labs import (
    DEFAULT_SAMPLES,
    bandwidth,
    cache_equivalence,
    causal_attention,
    dpo,
    grpo,
    kl,
    masks,
    speculative,
    unequal_rank,
)
from labkit.labs.common import check_samples

LABS_SCOPE = "8 NumPy mechanism labs; no model training"
#: Asia/Shanghai, as the source stamps its reports: UTC+08:00 all year (no DST since 1991), no zone database.
REPORT_TIME_ZONE = timezone(timedelta(hours=8), "Asia/Shanghai")

#: (report key, the lab's function) in the order the labs report lists them.
LABS = (
    ("ce_gradient", masks.run_ce_gradient),
    ("masks", masks.run),
    ("causal_attention", causal_attention.run),
    ("cache_equivalence", cache_equivalence.run),
    ("dpo", dpo.run),
    ("grpo", grpo.run),
    ("kl", kl.run),
    ("speculative_sampling", speculative.run),
)
#: (report key, the function) of the fault-injection supplement, in the source's order.
FAULTS = (
    ("bandwidth_budget", bandwidth.run),
    ("unequal_rank_gradients", unequal_rank.run),
    ("cache_faults", cache_equivalence.run_faults),
    ("wrong_rejection_fallback", speculative.run_wrong_fallback),
)


#: Discrepancy measures → their lab's tolerance.  Their last bits belong to the machine (BLAS, threads), so a
#: page shows them against it (``rounded(report, bounds=DISCREPANCY_BOUNDS)``: ``≤ 1e-12 ✓``); the JSON keeps all.
DISCREPANCY_BOUNDS = {
    "max_abs_gradient_error": masks.ABS_TOLERANCE,  # ce_gradient, masks, dpo
    "full_vs_cached_max_abs_logit_error": cache_equivalence.ABS_TOLERANCE,
    "prefix_vs_cached_max_abs_logit_error": cache_equivalence.ABS_TOLERANCE,
    "max_absolute_logit_error": cache_equivalence.ABS_TOLERANCE,  # cache_faults
    "exact_max_abs_error": speculative.EXACT_TOLERANCE,  # speculative_sampling
}


def shanghai_timestamp(now: datetime | None = None) -> str:
    """ISO-8601 time in Asia/Shanghai, e.g. ``2026-11-29T23:41:17.971152+08:00``."""
    return (now.astimezone(REPORT_TIME_ZONE) if now is not None else datetime.now(REPORT_TIME_ZONE)).isoformat()


def runtime_info() -> dict:
    """Versions the numbers were computed with: Python, NumPy, the platform, and the dtype."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "dtype": "float64",
    }


def _run_all(runners: Mapping[str, Callable[[], dict]]) -> tuple[dict, dict]:
    """Run each lab in order up to the first failed check: (results, its ``failed_lab`` and ``failure`` or {})."""
    results = {}
    for key, lab in runners.items():
        try:
            results[key] = lab()
        except AssertionError as failure:  # LabCheckFailed, or NumPy's assert_* in a lab
            return results, {"failed_lab": key, "failure": str(failure).strip() or type(failure).__name__}
    return results, {}


def labs_report(samples: int = DEFAULT_SAMPLES, runners: Mapping[str, Callable[[], dict]] | None = None) -> dict:
    """Run the eight mechanism labs, the speculative one with ``samples`` draws: the source's report.
    ``runners`` replaces the whole table (tests use it to make a check fail)."""
    samples = check_samples(samples)
    start = time.perf_counter()
    if runners is None:
        labs = dict(LABS)
        runners = labs | {"speculative_sampling": partial(labs["speculative_sampling"], samples=samples)}
    results, failed = _run_all(runners)
    return {
        "status": "failed" if failed else "passed",
        "scope": LABS_SCOPE,
        "timestamp_shanghai": shanghai_timestamp(),
        "runtime": runtime_info(),
        "elapsed_seconds": time.perf_counter() - start,
        **failed,
        "labs": results,
    }


def faults_report(runners: Mapping[str, Callable[[], dict]] | None = None) -> dict:
    """Run the fault-injection supplement (no ``scope``, no ``elapsed_seconds``: the source's has none)."""
    results, failed = _run_all(runners if runners is not None else dict(FAULTS))
    return {
        "status": "failed" if failed else "passed",
        "timestamp_shanghai": shanghai_timestamp(),
        "runtime": runtime_info(),
        **failed,
        **results,
    }


def without_volatile_fields(report: Mapping) -> dict:
    """``report`` without the wall clock and the machine (of ``runtime`` only ``dtype``): what a page may store."""
    kept = {k: v for k, v in report.items() if k not in ("timestamp_shanghai", "elapsed_seconds")}
    if "runtime" in kept:
        kept["runtime"] = {"dtype": kept["runtime"]["dtype"]}
    return kept
