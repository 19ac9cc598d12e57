"""``labkit trace tool torture --kills N --timer-kills T --clients M --races R --seed S``: trace three under real
crashes (SIGKILL before seeded statements or on a timer, restart, recovery) and racing clients; the schedule count,
kills, restarts and every invariant's result.  Exit status 1 when any invariant was violated.
"""

from __future__ import annotations


def _count(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def configure(parser) -> None:
    from labkit.cli.trace import output_dir
    from labkit.tools.torture.workload import RUNTIMES, SERVICES

    parser.add_argument(
        "--kills",
        type=_count,
        default=200,
        metavar="N",
        help="kill the runtime this many times before a counted statement (default 200)",
    )
    parser.add_argument(
        "--timer-kills",
        type=_count,
        default=0,
        metavar="N",
        help="kill the runtime this many times more at a random moment, on a timer (default 0)",
    )
    parser.add_argument(
        "--clients",
        type=_count,
        default=3,
        metavar="M",
        help="client processes racing on one idempotency key (default 3)",
    )
    parser.add_argument("--races", type=_count, default=50, metavar="R", help="rounds of racing (default 50)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the crash schedules (default 0)")
    parser.add_argument(
        "--service",
        choices=list(SERVICES),
        default="idempotent",
        help="the calendar service (no_idempotency is deliberately broken)",
    )
    parser.add_argument(
        "--runtime",
        choices=list(RUNTIMES),
        default="journal_first",
        help="the runtime (journal_after_send is deliberately broken)",
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        type=output_dir,
        default=None,
        help="keep every store file under DIR (default: a temporary directory, removed)",
    )


def run(args) -> int:
    from labkit.tools.torture.report import run_torture

    report = run_torture(
        args.kills,
        args.clients,
        args.races,
        args.seed,
        service=args.service,
        runtime=args.runtime,
        root=args.keep,
        timer_kills=args.timer_kills,
    )
    print("\n".join(report.lines()))
    return 0 if report.ok else 1
