"""``labkit check``: list the book's self-checking exercises."""

from __future__ import annotations


def configure(parser) -> None:
    parser.add_argument("--page", help="only the exercises of pages whose path contains this text")


def run(args) -> int:
    import labkit.check as check

    for name, spec in check.exercises().items():
        if args.page and args.page not in spec.page:
            continue
        print(f"{name}({', '.join(spec.signature)})  [{spec.page}]\n    {spec.task}")
    return 0
