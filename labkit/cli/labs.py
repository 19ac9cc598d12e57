"""``labkit labs``: run the eight mechanism labs of chapter 11 and write the JSON report.

This module is the command's parser (``--output``, shared with ``labkit faults``, and ``--samples``) and a thin
``run``: the labs themselves (NumPy) are imported only when the command runs, through the CLI's one lazy point,
from ``labkit/cli/reports.py`` — so ``labkit labs --help`` stays cheap.  Exit status 0 when every check passes,
1 when one fails (the report, ``"status": "failed"``, is still written), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from labkit.cli import lazy
from labkit.cli.trace import output_file  # checked while parsing: a folder or unwritable place is refused
from labkit.labs import DEFAULT_SAMPLES, MAX_SAMPLES, MIN_SAMPLES, samples_out_of_range

#: the module that runs the labs and writes their report (imported by ``run``, not before)
WORK = "labkit.cli.reports"


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
    return lazy(WORK).run_labs(args)
