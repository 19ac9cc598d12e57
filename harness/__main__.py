"""``python -m harness --kills N --timer-kills T --clients M --races R --seed S``: trace three under real
crashes (SIGKILL before seeded statements or on a timer, restart, recovery) and racing clients; the schedule count,
kills, restarts and every invariant's result.  Exit status 1 when any invariant was violated, 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import sys

from harness.report import run_torture
from harness.workload import RUNTIMES, SERVICES, VARIANT
from labkit.cli.trace import output_dir

#: option → (default, metavar, help) of the counts ``run_torture`` takes (and checks)
COUNTS = {
    "--kills": (200, "N", "kill the runtime this many times before a counted statement"),
    "--timer-kills": (0, "N", "kill the runtime this many times more at a random moment, on a timer"),
    "--clients": (3, "M", "client processes racing on one idempotency key"),
    "--races": (50, "R", "rounds of racing"),
}
HELP = "kill the runtime at random statements and race clients on one key; check the invariants"


def configure(parser) -> None:
    for option, (default, metavar, text) in COUNTS.items():
        parser.add_argument(option, type=int, default=default, metavar=metavar, help=f"{text} (default {default})")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the crash schedules (default 0)")
    variants = {
        "--service": (SERVICES, "the calendar service (no_idempotency is deliberately broken)"),
        "--runtime": (RUNTIMES, "the runtime (journal_after_send is deliberately broken)"),
    }
    for option, (names, text) in variants.items():
        parser.add_argument(option, choices=list(names), default=VARIANT[option.removeprefix("--")], help=text)
    parser.add_argument(
        "--keep",
        metavar="DIR",
        type=output_dir,
        help="keep every store file under DIR (default: a temporary directory, removed)",
    )


def run(args) -> int:
    chosen = ("kills", "timer_kills", "clients", "races", "seed", "service", "runtime")
    report = run_torture(**{name: getattr(args, name) for name in chosen}, root=args.keep)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness", description=HELP)
    configure(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"python -m harness: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
