"""``labkit labs``: run the eight mechanism labs of chapter 11 and write their JSON report.

Exit status 0 when every check passes, 1 when one fails (the report, ``"status": "failed"``, is
still written), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from labkit.cli.reports import add_output
from labkit.labs import DEFAULT_SAMPLES, MAX_SAMPLES, MIN_SAMPLES, samples_out_of_range

DEFAULT_OUTPUT = Path("build") / "reports" / "mechanism-labs.json"


def _samples(text: str) -> int:
    try:
        value = int(text) if text.isascii() else None  # int() would read "１００００" too
    except ValueError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(f"expected an integer number of samples, got {text!r}")
    problem = samples_out_of_range(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Run the eight mechanism labs of chapter 11 and write their JSON report."
    add_output(parser, DEFAULT_OUTPUT)
    parser.add_argument(
        "--samples",
        type=_samples,
        default=DEFAULT_SAMPLES,
        metavar="N",
        help=f"Monte Carlo samples of the speculative lab, {MIN_SAMPLES}–{MAX_SAMPLES} (default: {DEFAULT_SAMPLES})",
    )


def summary_lines(report: dict) -> list[str]:
    """The short summary printed after a passing run."""
    labs = report["labs"]
    return [
        f"PASS: {len(labs)} mechanism labs in {report['elapsed_seconds']:.3f} s",
        f"CE finite-difference error: {labs['ce_gradient']['max_abs_gradient_error']:.3e}",
        f"Cache logit max error: {labs['cache_equivalence']['full_vs_cached_max_abs_logit_error']:.3e}",
        f"DPO loss: {labs['dpo']['loss_nat']!r} nat",
        f"Speculative proportions ({labs['speculative_sampling']['samples']} samples): "
        f"{labs['speculative_sampling']['observed_distribution']}",
    ]


def run(args: argparse.Namespace) -> int:
    from labkit.cli.reports import finish
    from labkit.labs.report import labs_report

    return finish(labs_report(samples=args.samples), args.output, summary_lines)
