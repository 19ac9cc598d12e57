"""What ``labkit labs`` and ``labkit faults`` share: write the report, then say how it went."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def add_output(parser, default: Path) -> None:
    """The ``--output PATH`` option: where the JSON report goes."""
    from labkit.cli.trace import output_file  # checked while parsing: a folder or unwritable place is refused

    parser.add_argument(
        "--output",
        type=output_file,
        default=default,
        metavar="PATH",
        help=f"where to write the report (default: {default})",
    )


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
