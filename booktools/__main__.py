"""The book's one maintenance entry point.

``build`` regenerates pages' ``.ipynb`` (``--prose``: Markdown cells only; ``--site``: the static site;
``--pdf``: the book as a PDF),
``check`` checks the book offline.  Nothing it runs writes into a page's ``.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from booklab import glossary
from booklab.edits import book_pages
from booktools import book, edition_book, notebooks, pdf
from labkit.core.fixtures import book_root
from labkit.reader.style import find_cjk_font


def build_pages(root: Path, paths: list[Path], prose: bool) -> int:
    if not prose and find_cjk_font() is None:  # the style stays quiet without one: every token a □
        print(
            "no font with Chinese glyphs is installed, so every figure would store the traces' tokens as □: "
            "install one (apt-get install fonts-wqy-microhei) and build again",
            file=sys.stderr,
        )
        return 2
    for path in paths or book_pages(root):
        path = Path(path).with_suffix(".md") if Path(path).suffix == ".ipynb" else Path(path)
        if not path.exists():
            print(f"no such notebook source: {path}", file=sys.stderr)
            return 2
        if not prose:
            print(f"building {path}", flush=True)
            notebooks.build(path)
            continue
        try:
            notebooks.sync_prose(path)
        except ValueError as err:
            print(err, file=sys.stderr)
            return 1
    return 0


def check(root: Path) -> list[str]:
    """Every problem of the book at ``root``, each line prefixed with what found it."""
    found = [f"notebooks: {line}" for line in notebooks.check_pairs(root)]
    found += [f"glossary: {line}" for line in glossary.problems(root)]
    return found + [f"book: {line}" for line in book.check(root)] + edition_book.problems(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="regenerate pages' .ipynb (or, with --site, the static site)")
    b.add_argument("paths", nargs="*", type=Path, help="notebooks/*.md to build (default: all)")
    mode = b.add_mutually_exclusive_group()
    mode.add_argument("--prose", action="store_true", help="copy Markdown cells only (no execution)")
    mode.add_argument("--site", action="store_true", help="the players' page bundles, then myst build --html")
    mode.add_argument("--pdf", action="store_true", help="the book as a PDF, offline (myst build --tex, XeLaTeX)")
    b.add_argument("--edition", choices=["zh"], help="sync pages of the Chinese edition (zh/notebooks/*.md)")
    b.add_argument(
        "--repository",
        help="with --site: the GitHub owner/name the site links to and opens on Binder"
        " (default: $GITHUB_REPOSITORY, else the clone's GitHub origin)",
    )
    c = sub.add_parser("check", help="check the whole book offline; exit 1 on any problem")
    for command in (b, c):
        command.add_argument("--book", type=Path, help="the book's folder (default: this folder or the nearest above)")
    args = parser.parse_args(argv)
    try:
        root = book_root(args.book)
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 2
    if args.action == "build":
        if (args.site or args.pdf) and args.paths:
            parser.error("build --site and --pdf build the whole book; give no pages")
        if args.edition and (args.site or args.pdf):
            parser.error("--edition is for building pages; build --site publishes every edition")
        if args.pdf:
            return pdf.main(root)
        if args.repository is not None and not args.site:
            parser.error("--repository is for build --site (the launch button of the published book)")
        if args.edition:
            return edition_book.build_pages(root, args.edition, args.paths, args.prose)
        if not args.site:
            return build_pages(root, args.paths, args.prose)
        try:
            return book.build_site(root, args.repository) or edition_book.build_sites(root, args.repository)
        except ValueError as err:
            parser.error(str(err))
    problems = check(root)
    for line in edition_book.warnings(root):
        print(f"warning: {line}", file=sys.stderr)
    print("\n".join(problems) or "book check passed: pairs, glossary links, toc, pages, references, players")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
