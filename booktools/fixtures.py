"""``labkit fixtures build|check``: run the fixture recipes, or prove the stored files match them.

A command of the book's clone (``BOOK_COMMANDS`` in ``labkit/cli/__init__.py``): the recipes are
``booktools.recipes.RECIPES``, one per fixture folder (``fixtures/text``, ``fixtures/diffusion``, ``fixtures/tools``);
a trace kind's name stands for the folder it reads (``labkit.trace.kinds``: ``--only tool`` is ``tools``).  The
recipes and the kinds (NumPy, every domain) are taken with ``lazy`` when the command runs, so
``labkit fixtures --help`` imports neither.
"""

from __future__ import annotations

from labkit.cli import lazy


def recipes(names: list[str] | None = None) -> dict:
    """Recipe name (its fixture folder) → ``build(dest) -> list[str]``: the named ones (all by default; a kind's
    name, ``tool``, stands for its folder, ``tools``); an unknown name is a clear error."""
    kinds = lazy("labkit.trace.kinds").KINDS
    known = lazy("booktools.recipes").RECIPES
    names = [kinds[n].fixture if n in kinds else n for n in names or known]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"unknown recipe {unknown[0]!r}; expected one of {sorted(known)}")
    return {name: known[name] for name in dict.fromkeys(names)}


def configure(parser) -> None:
    parser.add_argument(
        "action",
        choices=["build", "check"],
        help="build: rewrite fixtures/ from the recipes; check: rebuild in a "
        "temporary folder and compare with fixtures/",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="RECIPE",
        help="limit to a recipe, named after its fixture folder or its kind (repeatable)",
    )
    parser.add_argument(
        "--book",
        metavar="PATH",
        help="the book's folder whose recipes run (default: this folder or the nearest one above it)",
    )


def run(args) -> int:
    files = lazy("booktools.fixture_files")
    if args.action == "build":
        for rel in files.build(recipes(args.only)):
            print(f"wrote fixtures/{rel}")
        return 0
    problems = files.check(recipes(args.only))
    print("\n".join(f"MISMATCH {line}" for line in problems) or "fixtures match their recipes")
    return 1 if problems else 0
