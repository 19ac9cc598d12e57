"""``labkit reset PAGE | --all``: bring a page, or every page, back to the book's original.

Under ``make lab`` and ``labkit lab`` the book's pages are never written (see
``lab_contents.py``): a reader's edits of ``notebooks/…/page.md`` are kept in its working copy
``my-edits/notebooks/…/page.ipynb``.  Resetting a page sets that copy aside as
``page.before-reset.ipynb`` (one undo: open it with *File → Open from Path*); other pages keep
their edits.  With no argument the command lists the pages that have edits.  No git needed.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

EDITS = "my-edits"  # the reader's working copies, beside notebooks/ (kept out of git)
PAGES = "notebooks"
PAGE_SUFFIXES = (".md", ".ipynb")
SET_ASIDE = ".before-reset.ipynb"


def is_page(book: Path, path: str) -> bool:
    """``path`` (relative to the book) names a page the book ships: a notebook under notebooks/."""
    rel = PurePosixPath(path.strip("/"))
    return rel.parts[:1] == (PAGES,) and rel.suffix in PAGE_SUFFIXES and (book / rel).is_file()


def working_copy(book: Path, path: str) -> Path:
    """Where the reader's edits of page ``path`` (its ``.md`` or ``.ipynb``) are kept."""
    return book / EDITS / PurePosixPath(path.strip("/")).with_suffix(".ipynb")


def set_aside(copy: Path) -> Path:
    """Move a working copy out of the way (replacing an earlier one set aside)."""
    return copy.replace(copy.with_name(copy.stem + SET_ASIDE))


def edited_pages(book: Path) -> list[str]:
    """The pages with a working copy, as their ``.md`` paths relative to the book."""
    found = sorted((book / EDITS).rglob("*.ipynb")) if (book / EDITS).is_dir() else []
    pages = [copy.relative_to(book / EDITS).with_suffix(".md").as_posix() for copy in found]
    return [p for p in pages if is_page(book, p)]  # a copy set aside names no page


def page_path(book: Path, given: str) -> str:
    """``given`` (a page's .md or .ipynb, from here or from the book's folder) as the page's path."""
    for candidate in (Path(given).resolve(), (book / given).resolve()):
        try:
            rel = candidate.relative_to(book).as_posix()
        except ValueError:
            continue
        if is_page(book, rel):
            return PurePosixPath(rel).with_suffix(".md").as_posix()
    raise ValueError(f"PAGE must be a page of the book (a .md or .ipynb under {book / PAGES}), got {given!r}")


def configure(parser) -> None:
    parser.add_argument("page", nargs="?", metavar="PAGE", help="the page to reset (its .md or .ipynb)")
    parser.add_argument("--all", action="store_true", help="reset every page that has edits")
    parser.add_argument("--book", metavar="PATH", help="the book's folder (default: this folder or one above it)")


def run(args) -> int:
    from labkit.core.fixtures import book_root

    book = book_root(args.book)
    if args.all and args.page:
        raise ValueError("give PAGE or --all, not both")
    edited = edited_pages(book)
    if not args.all and not args.page:
        for page in edited:
            print(page)
        print(f"{len(edited)} page(s) with edits; labkit reset PAGE (or --all) brings a page back", flush=True)
        return 0
    for page in edited if args.all else [page_path(book, args.page)]:
        copy = working_copy(book, page)
        if copy.is_file():
            print(f"{page}: back to the book's page; your edits are in {set_aside(copy).relative_to(book)}")
        else:
            print(f"{page}: already the book's page (no edits)")
    print("reload an open page in JupyterLab: File → Reload Notebook from Disk")
    return 0
