"""The editions in the book's maintenance commands: build (sync), check, and the published site.

``python -m booktools build --edition zh [PAGE …]`` syncs the edition's pages
(``booktools.edition``); ``check`` adds each edition's problems (its toc mirrors the English
one, every English page has its page, code and outputs identical, the edition's own offline book
check: toc, citations, cross-references, players) and warns, without failing, when an English
page's prose changed after its translation was synced.  ``build --site`` publishes each edition
under ``/<lang>/`` of the English site.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

from booklab import glossary
from booklab.edits import book_pages
from booktools import book, edition, notebooks


def build_pages(root: Path, lang: str, paths: list[Path], prose: bool) -> int:
    """Sync the given pages of edition ``lang`` (default: every page it has); 1 on a refused page."""
    try:
        base = edition.edition_root(root, lang)
    except edition.EditionError as err:
        print(err, file=sys.stderr)
        return 2
    if not (base / "myst.yml").is_file():
        print(f"the book has no {lang} edition ({base}/myst.yml)", file=sys.stderr)
        return 2
    status = 0
    for path in paths or book_pages(base):
        path = Path(path).with_suffix(".md")
        if not path.is_file() and (base / path).is_file():
            path = base / path  # NB=notebooks/X.md names the edition's page too
        print(f"syncing {path}" + ("" if prose else " (executing it in its own folder)"), flush=True)
        try:
            edition.sync(root, lang, path, execute=not prose)
        except edition.EditionError as err:
            print(err, file=sys.stderr)
            status = 1
    return status


def missing_pages(root: Path, lang: str) -> list[str]:
    """The English pages (relative to the book) that have no page in edition ``lang``."""
    base = edition.edition_root(root, lang)
    return [edition.rel(root, md) for md in book_pages(root) if not (base / md.relative_to(root)).is_file()]


def identity_problems(root: Path, lang: str, page: Path) -> list[str]:
    """Page ``page`` of edition ``lang`` against its English page: code of the ``.md`` and the
    ``.ipynb``, every stored output (localised ones by their verdict/widget)."""
    english_md = edition.english_page(root, lang, page)
    name = edition.rel(root, Path(page).with_suffix(".md"))
    if not english_md.is_file():
        return [f"{name}: no English page {edition.rel(root, english_md)}"]
    found = [edition.code_difference(jupytext.read(english_md), jupytext.read(page), name)]
    zh_ipynb, en_ipynb = Path(page).with_suffix(".ipynb"), english_md.with_suffix(".ipynb")
    if not zh_ipynb.is_file() or not en_ipynb.is_file():
        return [p for p in found if p] + [f"{name}: no .ipynb to compare; run `make zh NB={name}`"]
    english, translated = nbformat.read(en_ipynb, as_version=4), nbformat.read(zh_ipynb, as_version=4)
    found.append(edition.code_difference(english, translated, edition.rel(root, zh_ipynb)))
    en_code = [c for c in english.cells if c.cell_type == "code"]
    zh_code = [c for c in translated.cells if c.cell_type == "code"]
    for number, (a, b) in enumerate(zip(en_code, zh_code, strict=False), 1):
        found.append(
            edition.output_difference(a.get("outputs", []), b.get("outputs", []), f"{name}: code cell {number}")
        )
    return [problem for problem in found if problem]


def toc_mirror_problems(root: Path, lang: str) -> list[str]:
    """The edition's toc lists the English toc's pages, in the same order."""
    english = book.toc_files(book.load_config(root))
    ours = book.toc_files(yaml.safe_load((root / lang / "myst.yml").read_text(encoding="utf-8")))
    if ours == english:
        return []
    extra, missing = sorted(set(ours) - set(english)), [f for f in english if f not in ours]
    detail = (
        f"missing {missing[:5]}" if missing else f"not in the English toc {extra[:5]}" if extra else "in another order"
    )
    return [f"{lang}/myst.yml: its toc does not mirror myst.yml's ({detail})"]


def problems(root: Path) -> list[str]:
    """Every problem of every edition the book carries, each prefixed with the edition."""
    found = []
    for lang in edition.editions(root):
        base = root / lang
        lines = toc_mirror_problems(root, lang)
        missing = missing_pages(root, lang)
        lines += [f"{len(missing)} English pages have no {lang} page: {', '.join(missing)}"] if missing else []
        if not (base / "notebooks").is_dir():  # no page yet: nothing else to check
            found += [f"{lang}: {line}" for line in lines]
            continue
        for page in book_pages(base):
            lines += identity_problems(root, lang, page)
        lines += [f"notebooks: {line}" for line in notebooks.check_pairs(base)]
        lines += [f"glossary: {line}" for line in glossary.problems(base)]
        with edition.language(lang):
            lines += [f"book: {line}" for line in book.check(base)]
        found += [f"{lang}: {line}" for line in lines]
    return found


def warnings(root: Path) -> list[str]:
    """Pages whose English prose changed after their translation was synced (not failures)."""
    return [f"{lang}: {line}" for lang in edition.editions(root) for line in edition.stale(root, lang)]


def build_sites(root: Path, repository: str | None) -> int:
    """Each edition's site, built like the English one with ``BASE_URL`` + ``/<lang>``, then
    placed at ``_build/html/<lang>/`` of the English site (which ``build --site`` built first)."""
    site = root / "_build" / "html"
    status = 0
    for lang in edition.editions(root):
        base = os.environ.get("BASE_URL", "").rstrip("/")
        with edition.environment(BASE_URL=f"{base}/{lang}", LABKIT_LANG=lang):
            status = book.build_site(root / lang, repository) or status
        built = root / lang / "_build" / "html"
        if status == 0 and built.is_dir():
            shutil.rmtree(site / lang, ignore_errors=True)
            shutil.copytree(built, site / lang)
            print(f"the {lang} edition: {site / lang}")
    return status
