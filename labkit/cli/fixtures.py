"""``labkit fixtures build|check``: run the fixture recipes, or prove the stored files match them."""

from __future__ import annotations

from labkit.core import fixtures


def configure(parser) -> None:
    parser.add_argument("action", choices=["build", "check"],
                        help="build: rewrite fixtures/ from the recipes; check: rebuild in a "
                             "temporary folder and compare with fixtures/")
    parser.add_argument("--only", action="append", metavar="RECIPE",
                        help=f"limit to a recipe (repeatable); known: {', '.join(fixtures.RECIPES)}")


def run(args) -> int:
    names = args.only
    if names:
        unknown = sorted(set(names) - set(fixtures.RECIPES))
        if unknown:
            raise ValueError(f"unknown recipe {unknown[0]!r}; expected one of {sorted(fixtures.RECIPES)}")
    if args.action == "build":
        for rel in fixtures.build(names=names):
            print(f"wrote fixtures/{rel}")
        return 0
    problems = fixtures.check(names)
    if problems:
        for line in problems:
            print(f"MISMATCH {line}")
        return 1
    print("fixtures match their recipes")
    return 0
