"""``labkit faults``: the fault-injection supplement of chapter 11 and its JSON report, shaped as ``labkit labs``."""

import argparse

from labkit.cli import lazy
from labkit.cli.labs import REPORT, add_output, faults_summary_lines, finish


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the fault-injection supplement of chapter 11 (bandwidth budget, unequal-rank gradients, "
        "cache faults, wrong rejection fallback) and write its JSON report."
    )
    add_output(parser, "fault-injection")


def run(args: argparse.Namespace) -> int:
    return finish(lazy(REPORT).faults_report(), args.output, faults_summary_lines)
