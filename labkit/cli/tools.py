"""``labkit trace tool [--scenario NAME | --fault NAME] [--out PATH]``: run trace three.

``labkit trace tool torture …`` runs it under real crashes and racing clients instead
(``labkit.cli.torture``)."""

from __future__ import annotations

from pathlib import Path


def configure(parser) -> None:
    from labkit.cli.faultopts import add_fault_options
    from labkit.tools.faults import SCENARIOS

    parser.add_argument(
        "--scenario", metavar="NAME", default=None, help="run a named scenario: " + ", ".join(SCENARIOS)
    )
    add_fault_options(
        parser,
        "inject a named fault (any scenario but 'happy'); see --list-faults",
        list_help="list the scenarios and faults and exit",
    )
    parser.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="where to write the JSONL trace (default: trace-tool-001[-NAME].jsonl)",
    )
    from labkit.cli import torture

    more = parser.add_subparsers(title="under stress", metavar="torture", required=False)
    text = "kill the runtime at random statements and race clients on one key; check the invariants"
    torture.configure(more.add_parser("torture", help=text, description=text))
    more.choices["torture"].set_defaults(_run=torture.run)


def run(args) -> int:
    from labkit.cli.faultopts import listed_faults
    from labkit.core.events import write_jsonl
    from labkit.tools.faults import FAULTS, HAPPY, faulty_config
    from labkit.tools.runtime import run_tool_trace

    if listed_faults(args, FAULTS, f"{'happy':28s} {HAPPY}"):
        return 0
    if args.scenario and args.fault and args.scenario != args.fault:
        raise ValueError(f"give --scenario or --fault, not both ({args.scenario!r} vs {args.fault!r})")
    name = args.fault or args.scenario
    config = faulty_config(None if name == "happy" else name)
    trace = run_tool_trace(config)
    default = "trace-tool-001.jsonl" if name in (None, "happy") else f"trace-tool-001-{name}.jsonl"
    out = write_jsonl(trace.events, Path(args.out or default))
    events = trace.events
    print(
        f"trace {config.trace_id}: scenario {name or 'happy'}, {len(events)} events "
        f"({events[0]['event_id']}–{events[-1]['event_id']})"
    )
    print(
        f"proposal   {trace.arguments_bytes.decode('utf-8', 'replace')} "
        f"({len(trace.first_call.decode.token_ids)} tokens)"
    )
    print(f"state      {' → '.join([trace.machine.history[0][0]] + [b for _, b, _ in trace.machine.history])}")
    print(f"calendar   {sorted(trace.service.store) or 'no event'}; request {trace.request_status}")
    if trace.answer is not None:
        print(f"answer     {trace.answer}")
    print(f"wrote      {out}")
    return 0
