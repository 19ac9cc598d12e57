"""The reader's working copies: a page is never written; an edited page lives in
``my-edits/notebooks/…/page.ipynb`` (``booklab.contents`` saves it there), and ``labkit reset PAGE | --all``
sets that copy aside as ``page.before-reset.ipynb`` (one undo); with no argument it lists the pages that
have edits.
"""

from __future__ import annotations

import os
from pathlib import Path

from booklab.launcher import BOOK_HELP, find_book

EDITS = "my-edits"  # the reader's working copies, beside notebooks/ (kept out of git)
PAGES = "notebooks"
PAGE_SUFFIXES = (".md", ".ipynb")
SET_ASIDE = ".before-reset.ipynb"
FRONT_MATTER = b"---\njupytext:"  # how every page's .md begins (CONTRIBUTING: start from the preface's)
#: what JupyterLab's File menu calls reloading an open page (a .md opened as a notebook is a
#: "Markdown File" to it: ``Reload %1 from Disk`` with the file type's name)
RELOAD = "File → Reload Markdown File from Disk"


def book_of(file: Path) -> Path | None:
    """The book a file belongs to: the folder above it holding ``myst.yml`` and ``notebooks/``."""
    folders = Path(file).resolve().parents
    return next((f for f in folders if (f / "myst.yml").is_file() and (f / PAGES).is_dir()), None)


def is_page(file: Path) -> bool:
    """``file`` is a page the book ships: a notebook (``.md``/``.ipynb``) under a book's notebooks/
    whose MyST source starts with the book's front matter (a reader's own new notebook does not)."""
    file, book = Path(file).resolve(), book_of(file)
    if ".ipynb_checkpoints" in file.parts:  # JupyterLab's checkpoint of a page is no page
        return False
    if file.suffix not in PAGE_SUFFIXES or not file.is_file() or book is None or (book / PAGES) not in file.parents:
        return False
    source = file.with_suffix(".md")
    return source.is_file() and source.read_bytes().startswith(FRONT_MATTER)


def book_pages(book: Path) -> list[Path]:
    """Every page (its ``.md``) of the book at ``book``, sorted; checkpoints left out."""
    found = (p for p in (book / PAGES).rglob("*.md") if ".ipynb_checkpoints" not in p.parts)
    return sorted(p for p in found if p.read_bytes().startswith(FRONT_MATTER))


def working_copy(page: Path) -> Path:
    """Where the reader's edits of ``page`` (its ``.md`` or ``.ipynb``) are kept."""
    page = Path(page).resolve()
    book = book_of(page)
    return book / EDITS / page.relative_to(book).with_suffix(".ipynb")


def set_aside(copy: Path) -> Path:
    """Move a working copy out of the way (replacing an earlier one set aside), stamped now: an
    open page then reads as changed on disk, and JupyterLab asks before saving the edits again."""
    aside = copy.replace(copy.with_name(copy.stem + SET_ASIDE))
    os.utime(aside)
    return aside


def edited_pages(book: Path) -> list[Path]:
    """The pages (their ``.md``) that have a working copy."""
    found = sorted((book / EDITS).rglob("*.ipynb")) if (book / EDITS).is_dir() else []
    pages = [book / copy.relative_to(book / EDITS).with_suffix(".md") for copy in found]
    return [page for page in pages if is_page(page)]  # a copy set aside names no page


def page_path(book: Path, given: str) -> Path:
    """``given`` (a page's .md or .ipynb, from here or from the book's folder) as the page's .md."""
    for candidate in (Path(given).resolve(), (book / given).resolve()):
        if is_page(candidate) and book_of(candidate) == book:
            return candidate.with_suffix(".md")
    raise ValueError(f"PAGE must be a page of the book (a .md or .ipynb under {book / PAGES}), got {given!r}")


def configure(parser) -> None:
    parser.add_argument("page", nargs="?", metavar="PAGE", help="the page to reset (its .md or .ipynb)")
    parser.add_argument("--all", action="store_true", help="reset every page that has edits")
    parser.add_argument("--book", type=Path, metavar="PATH", help=BOOK_HELP)


def run(args) -> int:
    book = find_book(args.book, "reset")
    if args.all and args.page:
        raise ValueError("give PAGE or --all, not both")
    edited = edited_pages(book)
    if not args.all and not args.page:
        for page in edited:
            print(page.relative_to(book).as_posix())
        print(f"{len(edited)} page(s) with edits; labkit reset PAGE (or --all) brings a page back", flush=True)
        return 0
    for page in edited if args.all else [page_path(book, args.page)]:
        copy, name = working_copy(page), page.relative_to(book).as_posix()
        if copy.is_file():
            print(f"{name}: back to the book's page; your edits are in {set_aside(copy).relative_to(book)}")
        else:
            print(f"{name}: already the book's page (no edits)")
    print(f"reload an open page in JupyterLab: {RELOAD}")
    return 0
