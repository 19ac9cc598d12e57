"""What the trace commands share: the ``--fault NAME`` and ``--list-faults`` options."""

from __future__ import annotations


def add_fault_options(parser, fault_help: str, choices=None, list_help: str = "list the named faults and exit") -> None:
    """Add ``--fault NAME`` (restricted to ``choices`` when given) and ``--list-faults``."""
    parser.add_argument("--fault", metavar="NAME", default=None, choices=choices, help=fault_help)
    parser.add_argument("--list-faults", action="store_true", help=list_help)


def listed_faults(args, faults: dict, *first: str) -> bool:
    """With ``--list-faults``, print ``first`` then one line per named fault, and say so."""
    if not args.list_faults:
        return False
    from labkit.core.faults import fault_lines

    print("\n".join([*first, *fault_lines(faults)]))
    return True
