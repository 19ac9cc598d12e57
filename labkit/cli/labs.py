"""``labkit labs`` and ``labkit faults``: run the eight mechanism labs of chapter 11, or its
fault-injection supplement, and write the JSON report.

Exit status 0 when every check passes, 1 when one fails (the report, ``"status": "failed"``, is
still written), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from labkit.cli.trace import output_file  # checked while parsing: a folder or unwritable place is refused
from labkit.labs import DEFAULT_SAMPLES, MAX_SAMPLES, MIN_SAMPLES, samples_out_of_range
from labkit.labs import report as reports


def add_output(parser, report: str) -> None:
    """The ``--output PATH`` option: where the JSON report goes (default ``build/reports/<report>.json``)."""
    default = Path("build") / "reports" / f"{report}.json"
    help_text = f"where to write the report (default: {default})"
    parser.add_argument("--output", type=output_file, default=default, metavar="PATH", help=help_text)


def finish(report: dict, output: Path, summary_lines: Callable[[dict], list[str]]) -> int:
    """Write ``report`` to ``output``; print a summary (0) or the failed check (1)."""
    from labkit.core.fixtures import write_json

    path = write_json(output, report)
    if report["status"] != "passed":
        print(f"FAIL: lab {report['failed_lab']!r}: {report['failure']}", file=sys.stderr)
        print(f"Report (status failed): {path.resolve()}", file=sys.stderr)
        return 1
    print("\n".join(summary_lines(report)))
    print(f"Report: {path.resolve()}")
    return 0


def _samples(text: str) -> int:
    try:
        value = int(text) if text.isascii() else None  # int() would read "１００００" too
    except ValueError:
        value = None
    problem = f"expected an integer number of samples, got {text!r}" if value is None else samples_out_of_range(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    add_output(parser, "mechanism-labs")
    samples_help = (
        f"Monte Carlo samples of the speculative lab, {MIN_SAMPLES}–{MAX_SAMPLES} (default: {DEFAULT_SAMPLES})"
    )
    parser.add_argument("--samples", type=_samples, default=DEFAULT_SAMPLES, metavar="N", help=samples_help)


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
    return finish(reports.labs_report(samples=args.samples), args.output, summary_lines)
