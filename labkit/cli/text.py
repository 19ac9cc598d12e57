"""``labkit trace text [--fault NAME] [--out PATH]``: run trace one, write its JSONL, summarise."""

from __future__ import annotations

from pathlib import Path


def configure(parser) -> None:
    from labkit.cli.faultopts import add_fault_options
    from labkit.text.faults import FAULTS

    parser.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="where to write the JSONL trace (default: trace-text-001.jsonl, "
        "or trace-text-001-FAULT.jsonl with --fault)",
    )
    add_fault_options(parser, "inject a named fault: " + ", ".join(FAULTS))


def run(args) -> int:
    from labkit.cli.faultopts import listed_faults
    from labkit.core.events import write_jsonl
    from labkit.text.faults import FAULTS, faulty_config
    from labkit.text.runtime import run_text_trace

    if listed_faults(args, FAULTS):
        return 0
    config = faulty_config(args.fault)
    result = run_text_trace(config)
    default = "trace-text-001.jsonl" if not args.fault else f"trace-text-001-{args.fault}.jsonl"
    out = write_jsonl(result.events, Path(args.out or default))
    print(
        f"trace {config.trace_id}: {len(result.events)} events "
        f"({result.events[0]['event_id']}–{result.events[-1]['event_id']})"
        + (f", fault {args.fault}" if args.fault else "")
    )
    print(f"selected   {result.selected}")
    print(f"returned   {result.text!r} ({len(result.returned_bytes)} bytes)")
    print(f"finish     {result.finish_reason}; final cache length {result.cache_final_length}")
    print(f"wrote      {out}")
    return 0
