"""The Chinese edition (``zh/``): one code, two languages, outputs identical by construction.

An edition is a MyST project of its own in a folder of the book (``zh/``, marked by its
``.labkit-edition`` file) whose ``notebooks/`` mirror the English ones page by page.  Its pages'
code cells are the English pages' own, byte for byte; only the Markdown is translated.

``sync`` makes a zh page's ``.ipynb`` from the English one: it refuses a zh ``.md`` whose code
cells differ from the English page (naming the page and the first differing cell), executes the
zh page in its own folder with the edition's language (so the kit's words come out in Chinese),
and keeps the English page's stored outputs for every output but the ones the edition localises
(a ``labkit check`` verdict, a player's widget view), whose verdict or widget must still be the
English one's.  Any other output that comes out differently is refused: the data never changes
with the language.  ``--prose`` does the same without a kernel, keeping the localised outputs the
zh ``.ipynb`` already holds.  Each sync records the English page's prose hash in
``zh/synced.toml``; ``stale`` names the pages whose English prose changed since.
"""

from __future__ import annotations

import configparser
import contextlib
import functools
import hashlib
import os
import re
import tomllib
from pathlib import Path

import jupytext
import nbformat
from nbclient.exceptions import CellExecutionError

from booklab.edits import book_pages
from booktools import notebooks

#: the editions besides the English one: the folder of the book each one lives in
EDITIONS = ("zh",)
MARKER = ".labkit-edition"
MANIFEST = "synced.toml"
CHECK_CLASS = 'class="labkit-check"'
FIGURE_CLASS = 'class="labkit-figure"'
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the book's nbval sanitizers (relative to the book), which the sync applies as `make test` does
SANITIZE = Path("tests") / "nbval_sanitize.cfg"
_VERDICT = re.compile(r"^(\S+) ([^\s:()]+)")


class EditionError(ValueError):
    """A page of an edition that cannot be synced (its code differs, its English page is stale …)."""


def edition_root(root: Path, lang: str) -> Path:
    if lang not in EDITIONS:
        raise EditionError(f"--edition must be one of {list(EDITIONS)}, got {lang!r}")
    return Path(root) / lang


def editions(root: Path) -> list[str]:
    """The editions the book at ``root`` carries (a folder with ``myst.yml`` and its marker)."""
    return [lang for lang in EDITIONS if (root / lang / "myst.yml").is_file() and (root / lang / MARKER).is_file()]


def english_page(root: Path, lang: str, page: Path) -> Path:
    """The English page a page of edition ``lang`` translates (``zh/notebooks/X.md`` → ``notebooks/X.md``)."""
    page = Path(page).resolve().with_suffix(".md")
    base = edition_root(root, lang).resolve()
    if base not in page.parents:
        raise EditionError(f"{page} is not a page of the {lang} edition (under {base}/notebooks)")
    return Path(root).resolve() / page.relative_to(base)


def rel(root: Path, path: Path) -> str:
    return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()


# -- code cells and prose ------------------------------------------------------------------------


def code_cells(nb) -> list[tuple[str, dict]]:
    return [(c.source, dict(c.get("metadata", {}))) for c in nb.cells if c.cell_type == "code"]


def code_difference(english, translated, name: str) -> str | None:
    """Where the translated notebook's code cells first differ from the English one's (None: identical)."""
    ours, theirs = code_cells(english), code_cells(translated)
    for number, (a, b) in enumerate(zip(ours, theirs, strict=False), 1):
        if a != b:
            what = "its options (tags, metadata)" if a[0] == b[0] else "its source"
            first = (b[0].strip().splitlines() or ["(empty)"])[0][:70]
            return f"{name}: code cell {number} (`{first}`) differs in {what} from the English page"
    if len(ours) != len(theirs):
        return f"{name}: {len(theirs)} code cells, the English page has {len(ours)}"
    return None


def prose_hash(md: Path) -> str:
    """A hash of a page's prose: its Markdown cells, in order (the code is checked cell by cell)."""
    cells = [c.source for c in jupytext.read(md).cells if c.cell_type == "markdown"]
    return hashlib.sha256("\n\x00\n".join(cells).encode("utf-8")).hexdigest()[:16]


# -- outputs: identical, except the ones the edition localises ----------------------------------


def localised(output) -> str | None:
    """What a localised output must keep across editions (None: an output that must be identical):
    a check verdict keeps its mark and exercise, a player's widget view keeps its model, a figure
    (``labkit.reader.Chart``) its place: its pixels are the English figure's, its description the edition's."""
    data = output.get("data", {})
    if WIDGET_VIEW in data:
        return "widget " + str(sorted(data[WIDGET_VIEW].items()))
    if FIGURE_CLASS in "".join(data.get("text/html", "")):  # a figure's description is in the edition's language
        return "figure"
    if CHECK_CLASS in data.get("text/html", ""):
        match = _VERDICT.match(str(data.get("text/plain", "")))
        return "verdict " + (" ".join(match.groups()) if match else "(none)")
    return None


#: what nbval does not compare (it never sees the bytes of an image or a widget's random model id)
UNCOMPARED = ("metadata", "traceback", "execution_count", "image/png", "image/jpeg", WIDGET_VIEW)


@functools.cache
def _sanitizers(config: Path) -> tuple[tuple[re.Pattern, str], ...]:
    if not config.is_file():
        return ()
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config, encoding="utf-8")
    return tuple((re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections())


def as_nbval_sees(output, config: Path) -> dict:
    """An output as nbval compares it: text only (no image bytes, no model id), sanitized like `make test`."""
    found = {}
    for key, value in {**output, **output.get("data", {})}.items():
        if key in UNCOMPARED or key == "data":
            continue
        text = "".join(value) if isinstance(value, list) else value
        for pattern, replace in _sanitizers(config) if isinstance(text, str) else ():
            text = pattern.sub(replace, text)
        found[key] = text
    return found


def coalesced(outputs: list) -> list:
    """``outputs`` with each run of prints to one stream joined into one output (as nbval compares them)."""
    joined = []
    for output in outputs:
        last = joined[-1] if joined else None
        if output.get("output_type") == "stream" and last and last.get("output_type") == "stream":
            if last.get("name") == output.get("name"):
                last["text"] = "".join(last["text"]) + "".join(output["text"])
                continue
        joined.append(dict(output) if output.get("output_type") == "stream" else output)
    return joined


def output_difference(english: list, translated: list, where: str, nbval: Path | None = None) -> str | None:
    """Why a zh cell's outputs are not the English cell's, modulo localised outputs (None: they agree).
    Stored outputs must be the English ones exactly; a fresh run as nbval compares them (``nbval``:
    its sanitizers' file), which joins the consecutive prints a kernel happened to send apart."""
    if nbval:
        english, translated = coalesced(english), coalesced(translated)
    if len(english) != len(translated):
        return f"{where}: {len(translated)} outputs, the English page stores {len(english)}"
    same = (lambda a, b: as_nbval_sees(a, nbval) == as_nbval_sees(b, nbval)) if nbval else (lambda a, b: a == b)
    for number, (a, b) in enumerate(zip(english, translated, strict=True)):
        keep_a, keep_b = localised(a), localised(b)
        if keep_a is None and keep_b is None and not same(a, b):
            return f"{where}, output {number}: differs from the English page's (data never changes with the language)"
        if keep_a != keep_b:
            return f"{where}, output {number}: {keep_b} where the English page has {keep_a}"
    return None


# -- the sync ------------------------------------------------------------------------------------


@contextlib.contextmanager
def environment(**values: str):
    """The environment variables ``values`` set for the block (this process and what it starts)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def language(lang: str):
    """The kit speaks ``lang`` in this process and the kernels it starts, for the block."""
    return environment(LABKIT_LANG=lang)


def compose(english, translated, fresh=None):
    """The edition's notebook: ``translated``'s cells, each code cell the English stored cell
    (id, metadata, outputs), its localised outputs taken from ``fresh`` (the zh page executed, or
    the zh ``.ipynb`` stored before)."""
    same_layout = [c.cell_type for c in english.cells] == [c.cell_type for c in translated.cells]
    stem = english.cells[0].id.rsplit("-", 1)[0] if english.cells and english.cells[0].get("id") else "page"
    en_code = iter([c for c in english.cells if c.cell_type == "code"])
    new_code = iter([c for c in fresh.cells if c.cell_type == "code"]) if fresh is not None else None
    cells = []
    for index, cell in enumerate(translated.cells):
        if cell.cell_type != "code":
            markdown = nbformat.v4.new_markdown_cell(cell.source, metadata=dict(cell.get("metadata", {})))
            markdown.id = english.cells[index].id if same_layout else f"{stem}-zh{index:03d}"
            cells.append(markdown)
            continue
        stored = nbformat.from_dict(dict(next(en_code)))
        if new_code is not None:  # the k-th localised output of the English cell ← the fresh cell's k-th
            fresh_ones = iter([o for o in next(new_code).outputs if localised(o) is not None])
            stored.outputs = [next(fresh_ones, o) if localised(o) is not None else o for o in stored.outputs]
        cells.append(stored)
    result = nbformat.from_dict(dict(english))
    result.cells = cells
    return result


def sync(root: Path, lang: str, page: Path, execute: bool = True) -> Path:
    """Write page ``page``'s ``.ipynb`` of edition ``lang`` and record the English prose it translates."""
    page = Path(page).resolve().with_suffix(".md")
    name = rel(root, page)
    english_md = english_page(root, lang, page)
    if not page.is_file():
        raise EditionError(f"no such page of the {lang} edition: {name}")
    if not english_md.is_file():
        raise EditionError(f"{name}: there is no English page {rel(root, english_md)} to translate")
    stale = notebooks.pair_problems(english_md)
    if stale:
        raise EditionError(f"{name}: its English page is out of step ({stale[0]}); regenerate it first")
    english = nbformat.read(english_md.with_suffix(".ipynb"), as_version=4)
    translated = jupytext.read(page)
    problem = code_difference(jupytext.read(english_md), translated, name)
    if problem:
        raise EditionError(problem + "; the Chinese page's code cells must be the English ones, byte for byte")
    out = page.with_suffix(".ipynb")
    before = out.read_bytes() if out.is_file() else None
    if execute:
        with language(lang):
            try:
                fresh = nbformat.read(notebooks.build(page), as_version=4)
            except CellExecutionError as err:  # the English page runs: the zh page's folder or language broke it
                failed = f"{err.ename}: {err.evalue}"
                raise EditionError(
                    f"{name}: a cell failed when the page ran in Chinese in its folder: {failed}"
                ) from err
        _restore(out, before)  # written only once it agrees with the English page
    elif out.is_file():
        fresh = nbformat.read(out, as_version=4)
        if code_difference(english, fresh, name) or len(code_cells(fresh)) != len(code_cells(english)):
            raise EditionError(f"{name}: its stored .ipynb has other code; run `make zh NB={name}` (it executes)")
    else:
        raise EditionError(f"{name}: no stored .ipynb to keep localised outputs from; run `make zh NB={name}`")
    composed = compose(english, translated, fresh)
    problem = disagreement(english, fresh, name, Path(root) / SANITIZE if execute else None)
    if problem:
        raise EditionError(problem)
    nbformat.write(composed, out)
    record(root, lang, {rel(root, english_md): prose_hash(english_md)})
    return out


def disagreement(english, fresh, name: str, nbval: Path | None) -> str | None:
    """Where ``fresh`` (the zh page run now, compared as nbval does with ``nbval``'s sanitizers; or,
    with None, the zh .ipynb stored before) disagrees with the English page's stored outputs.  A
    stored one lends only its localised outputs, which must still be the English page's verdicts."""
    en_code = [c for c in english.cells if c.cell_type == "code"]
    zh_code = [c for c in fresh.cells if c.cell_type == "code"]
    for number, (a, b) in enumerate(zip(en_code, zh_code, strict=True), 1):
        where = f"{name}: code cell {number}"
        if nbval:
            problem = output_difference(a.get("outputs", []), b.get("outputs", []), where, nbval)
            if problem:
                return problem
            continue
        kept = [[localised(o) for o in c.get("outputs", []) if localised(o)] for c in (a, b)]
        if kept[0] != kept[1]:
            return (
                f"{where}: the English page now stores {kept[0] or 'none'}, the Chinese .ipynb {kept[1] or 'none'};"
                f" run `make zh NB={name}` (it executes the page)"
            )
    return None


def _restore(path: Path, content: bytes | None) -> None:
    if content is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(content)


# -- the manifest: the English prose each page was last synced with ------------------------------


def manifest(root: Path, lang: str) -> dict[str, str]:
    path = edition_root(root, lang) / MANIFEST
    if not path.is_file():
        return {}
    try:
        return dict(tomllib.loads(path.read_text(encoding="utf-8")).get("english-prose", {}))
    except tomllib.TOMLDecodeError as err:
        raise EditionError(f"{path}: not a manifest the sync wrote ({err}); delete it and sync every page") from err


def record(root: Path, lang: str, entries: dict[str, str]) -> Path:
    synced = manifest(root, lang) | entries
    path = edition_root(root, lang) / MANIFEST
    lines = [
        f"# Written by `python -m booktools build --edition {lang}`: for each English page, a hash of its",
        "# prose when its translation was last synced.  `make book-check` warns when the English prose changed.",
        "[english-prose]",
        *(f'"{page}" = "{digest}"' for page, digest in sorted(synced.items())),
    ]
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def stale(root: Path, lang: str) -> list[str]:
    """The zh pages whose English page's prose changed after they were last synced (warnings)."""
    synced, base, found = manifest(root, lang), edition_root(root, lang), []
    for page in book_pages(base):
        english = english_page(root, lang, page)
        if not english.is_file():
            continue
        key = rel(root, english)
        if key not in synced:
            found.append(f"{rel(root, page)}: never synced; run `make zh NB={rel(root, page)}`")
        elif synced[key] != prose_hash(english):
            found.append(
                f"{rel(root, page)}: the English page {key} changed its prose after this page was synced;"
                f" update the translation, then `make zh NB={rel(root, page)}`"
            )
    return found
