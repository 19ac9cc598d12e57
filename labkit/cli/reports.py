"""The work of ``labkit labs`` and ``labkit faults``: run the labs of chapter 11 (``labkit.labs.report``),
write the JSON report and print its summary.  Their command modules (``labkit/cli/labs.py``,
``labkit/cli/faults.py``) hold only the parsers and import this module in ``run``, through the CLI's one
lazy point, so that ``--help`` does not import NumPy.

Exit status 0 when every check passes, 1 when one fails (the report, ``"status": "failed"``, is still written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from labkit.core.fixtures import write_json
from labkit.labs import report as reports


def finish(report: dict, output: Path, summary_lines: Callable[[dict], list[str]]) -> int:
    """Write ``report`` to ``output``; print a summary (0) or the failed check (1)."""
    path = write_json(output, report)
    if report["status"] != "passed":
        print(f"FAIL: lab {report['failed_lab']!r}: {report['failure']}", file=sys.stderr)
        print(f"Report (status failed): {path.resolve()}", file=sys.stderr)
        return 1
    print("\n".join(summary_lines(report)))
    print(f"Report: {path.resolve()}")
    return 0


def labs_summary_lines(report: dict) -> list[str]:
    """The short summary printed after a passing ``labkit labs``."""
    labs = report["labs"]
    return [
        f"PASS: {len(labs)} mechanism labs in {report['elapsed_seconds']:.3f} s",
        f"CE finite-difference error: {labs['ce_gradient']['max_abs_gradient_error']:.3e}",
        f"Cache logit max error: {labs['cache_equivalence']['full_vs_cached_max_abs_logit_error']:.3e}",
        f"DPO loss: {labs['dpo']['loss_nat']!r} nat",
        f"Speculative proportions ({labs['speculative_sampling']['samples']} samples): "
        f"{labs['speculative_sampling']['observed_distribution']}",
    ]


def faults_summary_lines(report: dict) -> list[str]:
    """The short summary printed after a passing ``labkit faults``."""
    ranks, wrong = report["unequal_rank_gradients"], report["wrong_rejection_fallback"]
    return [
        "PASS: fault-injection supplement (4 checks)",
        *(
            f"Bandwidth lower bound, batch {c['batch']}: {c['lower_bound_ms']!r} ms, "
            f"≤ {c['aggregate_token_rate_ceiling']:.2f} tok/s aggregate"
            for c in report["bandwidth_budget"]["cases"]
        ),
        f"Unequal ranks: naive average {ranks['naive_average']!r}, "
        f"global token average {ranks['global_token_average']!r}",
        *(
            f"Cache fault {c['mode']}: max logit error {c['max_absolute_logit_error']:.3e}"
            for c in report["cache_faults"]["cases"]
        ),
        f"Wrong rejection fallback: output {wrong['wrong_output']}, "
        f"TV distance {wrong['wrong_total_variation_distance']!r}",
    ]


def run_labs(args: argparse.Namespace) -> int:
    """``labkit labs``: the eight mechanism labs (``--samples``), their report written to ``--output``."""
    return finish(reports.labs_report(samples=args.samples), args.output, labs_summary_lines)


def run_faults(args: argparse.Namespace) -> int:
    """``labkit faults``: the fault-injection supplement, its report written to ``--output``."""
    return finish(reports.faults_report(), args.output, faults_summary_lines)
