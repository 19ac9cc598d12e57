"""``labkit faults``: the fault-injection supplement of chapter 11 (bandwidth budget, unequal-rank gradients,
cache faults, wrong rejection fallback) and its JSON report; the output option, the thin ``run`` and the summary
as ``labkit labs``'s (the work in ``labkit/cli/reports.py``, imported only when the command runs)."""

from __future__ import annotations

import argparse

from labkit.cli import lazy
from labkit.cli.labs import WORK, add_output


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the fault-injection supplement of chapter 11 (bandwidth budget, unequal-rank gradients, "
        "cache faults, wrong rejection fallback) and write its JSON report."
    )
    add_output(parser, "fault-injection")


def run(args: argparse.Namespace) -> int:
    return lazy(WORK).run_faults(args)
