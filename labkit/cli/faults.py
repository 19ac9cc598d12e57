"""``labkit faults``: the fault-injection supplement of chapter 11 (bandwidth budget, unequal-rank gradients,
cache faults, wrong rejection fallback) and its JSON report; the output and summary as ``labkit labs``'s."""

from __future__ import annotations

import argparse

from labkit.cli.labs import add_output, finish
from labkit.labs import report as reports


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the fault-injection supplement of chapter 11 (bandwidth budget, unequal-rank gradients, "
        "cache faults, wrong rejection fallback) and write its JSON report."
    )
    add_output(parser, "fault-injection")


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


def run(args: argparse.Namespace) -> int:
    return finish(reports.faults_report(), args.output, faults_summary_lines)
