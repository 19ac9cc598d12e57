"""``labkit fixtures build|check``: run the fixture recipes, or prove the stored files match them.

``RECIPES`` is the registry: one line per domain that owns fixture files.
"""

from __future__ import annotations

import importlib

from labkit.core import fixtures

#: recipe name → the module whose ``build(dest) -> list[str]`` writes that domain's files
RECIPES: dict[str, str] = {
    "text": "labkit.text.fixture",
    "diffusion": "labkit.diffusion.fixture",
    "tools": "labkit.tools.fixture",
}


def recipes(names: list[str] | None = None) -> dict[str, fixtures.Recipe]:
    """The named recipes (all by default); an unknown name is a clear error."""
    names = list(names or RECIPES)
    unknown = sorted(set(names) - set(RECIPES))
    if unknown:
        raise ValueError(f"unknown recipe {unknown[0]!r}; expected one of {sorted(RECIPES)}")
    return {name: importlib.import_module(RECIPES[name]).build for name in names}


def build(names: list[str] | None = None, dest=None) -> list[str]:
    return fixtures.build(recipes(names), dest)


def check(names: list[str] | None = None) -> list[str]:
    return fixtures.check(recipes(names))


def configure(parser) -> None:
    parser.add_argument(
        "action",
        choices=["build", "check"],
        help="build: rewrite fixtures/ from the recipes; check: rebuild in a "
        "temporary folder and compare with fixtures/",
    )
    parser.add_argument(
        "--only", action="append", metavar="RECIPE", help=f"limit to a recipe (repeatable); known: {', '.join(RECIPES)}"
    )


def run(args) -> int:
    if args.action == "build":
        for rel in build(args.only):
            print(f"wrote fixtures/{rel}")
        return 0
    problems = check(args.only)
    if problems:
        for line in problems:
            print(f"MISMATCH {line}")
        return 1
    print("fixtures match their recipes")
    return 0
