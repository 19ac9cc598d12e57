"""``labkit labs``: run the eight mechanism labs of chapter 11 (``labkit.labs.report``), write the JSON report and
print its summary; ``labkit faults`` shares its option and its ``finish``.  The labs (NumPy) are taken with ``lazy``
when the command runs, so ``--help`` stays cheap.  Exit status 0 when every check passes, 1 when one fails (the
report, ``"status": "failed"``, is still written), 2 on bad arguments.
"""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from labkit.cli import lazy
from labkit.cli.trace import output_file  # checked while parsing: a folder or unwritable place is refused
from labkit.labs import DEFAULT_SAMPLES, MAX_SAMPLES, MIN_SAMPLES, samples_out_of_range

#: the module of the labs and their reports
REPORT = "labkit.labs.report"


def add_output(parser, report: str) -> None:
    """The ``--output PATH`` option: where the JSON report goes (default ``build/reports/<report>.json``)."""
    default = Path("build") / "reports" / f"{report}.json"
    help_text = f"where to write the report (default: {default})"
    parser.add_argument("--output", type=output_file, default=default, metavar="PATH", help=help_text)


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


def run(args: argparse.Namespace) -> int:
    return finish(lazy(REPORT).labs_report(samples=args.samples), args.output, labs_summary_lines)


def finish(report: dict, output: Path, summary_lines: Callable[[dict], list[str]]) -> int:
    """Write ``report`` to ``output``; print a summary (0) or the failed check (1: the report says "failed")."""
    path = lazy("labkit.core.fixtures").write_json(output, report)
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
