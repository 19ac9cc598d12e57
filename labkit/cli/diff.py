"""``labkit trace diff A.jsonl B.jsonl``: the first divergence between two traces (``labkit.trace.divergence``)."""

import sys
from pathlib import Path

from labkit.core.events import TraceError, read_jsonl
from labkit.trace.divergence import TraceKindMismatch, first_divergence


def configure(parser) -> None:
    parser.add_argument("a", type=Path, metavar="A.jsonl", help="the reference trace")
    parser.add_argument("b", type=Path, metavar="B.jsonl", help="the trace to compare with it")


def run(args) -> int:
    """Exit status: 0 identical, 1 diverged, 2 unusable input (missing or unreadable file, not a
    trace, a line that is not strict JSON — NaN, a number overflowing to infinity, a duplicate
    key, nesting too deep —, traces of different kinds), said in one line on stderr."""
    try:
        a, b = read_jsonl(args.a), read_jsonl(args.b)
        found = first_divergence(a, b)
    except (TraceError, TraceKindMismatch, ValueError, OSError, RecursionError) as exc:
        print(f"labkit trace diff: {' '.join(str(exc).split()) or type(exc).__name__}", file=sys.stderr)
        return 2
    if found is None:
        print(f"identical: {len(a)} events, every rule passed")
        return 0
    print(found.describe())
    return 1
