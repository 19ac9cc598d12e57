"""``labkit trace diffusion``: run trace two (optionally with a named fault) and write its files."""

from __future__ import annotations

import time
from pathlib import Path


def configure(parser) -> None:
    from labkit.cli.faultopts import add_fault_options
    from labkit.diffusion.faults import FAULTS

    parser.add_argument("--out", metavar="PATH", help="write the events as JSON Lines to PATH")
    parser.add_argument("--png", metavar="PATH", help="write the final PNG to PATH")
    add_fault_options(parser, f"run with a named fault: {', '.join(sorted(FAULTS))}", choices=sorted(FAULTS))


def run(args) -> int:
    from labkit.cli.faultopts import listed_faults
    from labkit.diffusion.faults import FAULTS, faulty_config
    from labkit.diffusion.pipeline import run_diffusion

    if listed_faults(args, FAULTS):
        return 0
    config = faulty_config(args.fault)
    start = time.perf_counter()
    result = run_diffusion(config)
    elapsed = time.perf_counter() - start
    for event in result.events:
        detail = ""
        payload = event["payload"]
        if "timestep" in payload:
            detail = f"t={payload['timestep']} → {payload['prev_timestep']}"
        rng = payload.get("rng")
        if rng:
            detail += f"  rng counter {rng['counter_before']}→{rng['counter_after']}"
        print(f"{event['event_id']} {event['event_type']:22s} {detail}".rstrip())
    print(
        f"png {result.png_digest} ({len(result.png)} bytes); {elapsed:.2f} s"
        + (f"; fault {args.fault}" if args.fault else "")
    )
    if args.out:
        print(f"wrote {result.write_jsonl(Path(args.out))}")
    if args.png:
        print(f"wrote {result.write_png(Path(args.png))}")
    return 0
