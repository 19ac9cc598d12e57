"""The Chinese edition's machinery on a small book of its own: the sync refuses changed code (naming
the page and the cell), keeps the English outputs but the localised ones, whose verdict must match,
records the English prose it translated, and the staleness warning names a page whose English
prose changed since."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from booktools import edition, edition_book
from labkit.core.fixtures import book_root

REPO = Path(__file__).resolve().parents[1]
FRONT = (REPO / "notebooks" / "00-preface.md").read_text(encoding="utf-8").split("\n---\n", 1)[0] + "\n---\n"

# A check's verdict: HTML with the labkit-check class, its text led by the mark and the exercise.
VERDICT = """```{code-cell} ipython3
import os
class Verdict:
    zh = os.environ.get("LABKIT_LANG") == "zh"
    def _repr_html_(self):
        return '<div class="labkit-check">' + repr(self) + "</div>"
    def __repr__(self):
        return "… demo: " + ("尚未作答" if self.zh else "not yet answered")
Verdict()
```
"""
DATA = """```{code-cell} ipython3
print(sum(range(10)))
```
"""


def page(prose: str, *cells: str) -> str:
    return FRONT + f"\n# {prose}\n\n" + "\n+++\n\n".join(f"Some {prose} words.\n\n{cell}" for cell in cells)


def english_notebook(md: Path, outputs: list[list[dict]]) -> Path:
    """``md``'s stored .ipynb, as `make notebooks` would write it, with ``outputs`` for its code cells."""
    nb = jupytext.read(md)
    code = iter(outputs)
    for index, cell in enumerate(nb.cells):
        cell.id = f"notebooks-{md.stem}-{index:03d}"
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(o) for o in next(code)]
            cell.execution_count = index
    nbformat.write(nb, md.with_suffix(".ipynb"))
    return md.with_suffix(".ipynb")


def verdict_output(text: str) -> dict:
    html = f'<div class="labkit-check">{text}</div>'
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": text, "text/html": html},
    }


def stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


@pytest.fixture
def book(tmp_path):
    """A book with one English page (a data cell and a verdict cell) and its zh edition."""
    (tmp_path / "myst.yml").write_text("version: 1\nproject:\n  toc:\n    - file: notebooks/a.ipynb\n", "utf-8")
    (tmp_path / "notebooks").mkdir()
    md = tmp_path / "notebooks" / "a.md"
    md.write_text(page("English", DATA, VERDICT), encoding="utf-8")
    english_notebook(md, [[stream("45\n")], [verdict_output("… demo: not yet answered")]])
    zh = tmp_path / "zh"
    (zh / "notebooks").mkdir(parents=True)
    (zh / "myst.yml").write_text((tmp_path / "myst.yml").read_text("utf-8"), "utf-8")
    (zh / edition.MARKER).write_text("zh\n", encoding="utf-8")
    (zh / "notebooks" / "a.md").write_text(page("中文", DATA, VERDICT), encoding="utf-8")
    return tmp_path


def zh_stored(book: Path, verdict: str = "… demo: 尚未作答") -> Path:
    """The zh page's .ipynb as a sync would have left it: English outputs, a Chinese verdict."""
    md = book / "zh" / "notebooks" / "a.md"
    return english_notebook(md, [[stream("45\n")], [verdict_output(verdict)]])


def test_the_sync_refuses_a_zh_page_whose_code_differs_naming_the_page_and_the_cell(book):
    zh = book / "zh" / "notebooks" / "a.md"
    zh.write_text(zh.read_text("utf-8").replace("range(10)", "range(11)"), encoding="utf-8")
    with pytest.raises(
        edition.EditionError, match=r"zh/notebooks/a\.md: code cell 1 \(`print\(sum\(range\(11\)\)\)`\)"
    ):
        edition.sync(book, "zh", zh, execute=False)
    assert not zh.with_suffix(".ipynb").exists()
    zh.write_text(page("中文", DATA, VERDICT.replace("ipython3\n", "ipython3\n:tags: [hide-input]\n")), "utf-8")
    with pytest.raises(edition.EditionError, match="code cell 2 .* differs in its options"):
        edition.sync(book, "zh", zh, execute=False)
    zh.write_text(page("中文", DATA), encoding="utf-8")
    with pytest.raises(edition.EditionError, match="1 code cells, the English page has 2"):
        edition.sync(book, "zh", zh, execute=False)


def test_the_prose_sync_keeps_the_english_outputs_and_the_stored_localised_ones(book):
    zh_stored(book)
    out = edition.sync(book, "zh", book / "zh" / "notebooks" / "a.md", execute=False)
    english = nbformat.read(book / "notebooks" / "a.ipynb", as_version=4)
    translated = nbformat.read(out, as_version=4)
    assert [c.source for c in translated.cells if c.cell_type == "markdown"][0].startswith("# 中文")
    en_code = [c for c in english.cells if c.cell_type == "code"]
    zh_code = [c for c in translated.cells if c.cell_type == "code"]
    assert [c.source for c in en_code] == [c.source for c in zh_code]
    assert [c.id for c in en_code] == [c.id for c in zh_code]
    assert zh_code[0].outputs == en_code[0].outputs
    assert zh_code[1].outputs[0]["data"]["text/plain"] == "… demo: 尚未作答"
    assert edition_book.identity_problems(book, "zh", book / "zh" / "notebooks" / "a.md") == []


def test_a_localised_output_must_keep_its_verdict_and_data_must_not_change(book):
    zh_stored(book, verdict="✔ demo: 正确")
    with pytest.raises(edition.EditionError, match=r"code cell 2: the English page now stores \['verdict … demo'\]"):
        edition.sync(book, "zh", book / "zh" / "notebooks" / "a.md", execute=False)
    stored = zh_stored(book)
    nb = nbformat.read(stored, as_version=4)
    nb.cells[1].outputs[0]["text"] = "46\n"  # a number that moved: the sync found it when it wrote the page
    nbformat.write(nb, stored)
    problems = edition_book.identity_problems(book, "zh", book / "zh" / "notebooks" / "a.md")
    assert problems == [
        "zh/notebooks/a.md: code cell 1, output 0: differs from the English page's"
        " (data never changes with the language)"
    ]


def test_nbval_s_view_of_an_output_ignores_images_and_model_ids_and_sanitizes():
    config = REPO / edition.SANITIZE
    a = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "AAA", "text/plain": "<Figure at 0x7f00aa11bb22>"},
    }
    b = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "BBB", "text/plain": "<Figure at 0x7f00cc33dd44>"},
    }
    assert edition.output_difference([a], [b], "p", nbval=config) is None
    assert edition.output_difference([a], [b], "p") is not None  # stored outputs: exactly the English ones
    b["data"]["text/plain"] = "<Axes>"
    assert edition.output_difference([a], [b], "p", nbval=config) is not None
    # a kernel may send one cell's prints in one piece or in two: nbval joins them, so does the sync
    split, whole = [stream("a\n"), stream("b\n")], [stream("a\nb\n")]
    assert edition.output_difference(split, whole, "p", nbval=config) is None
    assert edition.output_difference(split, [stream("a\nc\n")], "p", nbval=config) is not None
    assert edition.output_difference(split, whole, "p") is not None


def test_a_localised_output_is_replaced_in_place_whatever_the_prints_around_it(book):
    english = nbformat.read(book / "notebooks" / "a.ipynb", as_version=4)
    english.cells[-1].outputs = [
        nbformat.from_dict(o) for o in (stream("x\n"), stream("y\n"), verdict_output("… demo: no"))
    ]
    fresh = nbformat.read(zh_stored(book), as_version=4)
    fresh.cells[-1].outputs = [nbformat.from_dict(o) for o in (stream("x\ny\n"), verdict_output("… demo: 否"))]
    composed = edition.compose(english, jupytext.read(book / "zh" / "notebooks" / "a.md"), fresh)
    texts = [o.get("text") or o["data"]["text/plain"] for o in composed.cells[-1].outputs]
    assert texts == ["x\n", "y\n", "… demo: 否"]


def test_the_manifest_records_the_english_prose_and_a_changed_paragraph_is_a_warning(book):
    zh_stored(book)
    edition.sync(book, "zh", book / "zh" / "notebooks" / "a.md", execute=False)
    assert edition.manifest(book, "zh") == {"notebooks/a.md": edition.prose_hash(book / "notebooks" / "a.md")}
    assert edition_book.warnings(book) == []
    english = book / "notebooks" / "a.md"
    english.write_text(english.read_text("utf-8").replace("Some English words.", "Some new English words.", 1), "utf-8")
    assert edition_book.warnings(book) == [
        "zh: zh/notebooks/a.md: the English page notebooks/a.md changed its prose after this page was synced;"
        " update the translation, then `make zh NB=zh/notebooks/a.md`"
    ]
    (book / "zh" / edition.MANIFEST).unlink()
    assert edition_book.warnings(book) == ["zh: zh/notebooks/a.md: never synced; run `make zh NB=zh/notebooks/a.md`"]


def test_a_missing_page_is_named(book):
    (book / "notebooks" / "b.md").write_text(page("More", DATA), encoding="utf-8")
    assert edition_book.missing_pages(book, "zh") == ["notebooks/b.md"]


def test_the_kernel_of_a_zh_page_finds_the_clone_not_the_edition(book, monkeypatch):
    folder = book / "zh" / "notebooks"
    monkeypatch.chdir(folder)
    assert book_root() == book
    assert book_root(book / "zh") == book / "zh"  # named: the edition's own project (its check)
    (book / "zh" / edition.MARKER).unlink()
    assert book_root() == book / "zh"


def test_the_build_command_says_what_is_wrong(book):
    zh = book / "zh" / "notebooks" / "a.md"
    zh.write_text(zh.read_text("utf-8").replace("range(10)", "range(11)"), encoding="utf-8")
    run = [sys.executable, "-m", "booktools", "build", "--book", str(book), "--edition", "zh"]
    proc = subprocess.run([*run, "--prose", "notebooks/a.md"], capture_output=True, text=True)
    assert proc.returncode == 1 and "zh/notebooks/a.md: code cell 1" in proc.stderr, proc.stderr
    proc = subprocess.run([*run, "--site"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--edition is for building pages" in proc.stderr, proc.stderr
    proc = subprocess.run([*run[:-1], "fr"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--edition: invalid choice: 'fr'" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_the_sync_executes_the_zh_page_in_chinese_and_refuses_data_that_changes(book):
    """The kernel speaks the edition's language: its verdict comes out in Chinese and is kept;
    a printed value that changes with the language is refused, and the page is left as it was."""
    zh = book / "zh" / "notebooks" / "a.md"
    out = edition.sync(book, "zh", zh)
    cells = nbformat.read(out, as_version=4).cells
    assert cells[-1].outputs[0]["data"]["text/plain"] == "… demo: 尚未作答"
    assert edition_book.identity_problems(book, "zh", zh) == []
    assert os.environ.get("LABKIT_LANG") is None
    before = out.read_bytes()
    lang = '```{code-cell} ipython3\nprint(os.environ.get("LABKIT_LANG", "en"))\n```\n'
    for md, prose in ((book / "notebooks" / "a.md", "English"), (zh, "中文")):
        md.write_text(page(prose, DATA, VERDICT, lang), encoding="utf-8")
    english_notebook(
        book / "notebooks" / "a.md", [[stream("45\n")], [verdict_output("… demo: not yet answered")], [stream("en\n")]]
    )
    with pytest.raises(edition.EditionError, match=r"code cell 3, output 0: differs from the English page's"):
        edition.sync(book, "zh", zh)
    assert out.read_bytes() == before


@pytest.mark.slow
def test_a_cell_that_fails_only_in_the_edition_is_named_not_a_traceback(book):
    fails = '```{code-cell} ipython3\nassert os.environ.get("LABKIT_LANG") != "zh", "only English"\n```\n'
    for md, prose in ((book / "notebooks" / "a.md", "English"), (book / "zh" / "notebooks" / "a.md", "中文")):
        md.write_text(page(prose, VERDICT, fails), encoding="utf-8")
    english_notebook(book / "notebooks" / "a.md", [[verdict_output("… demo: not yet answered")], []])
    run = [sys.executable, "-m", "booktools", "build", "--book", str(book), "--edition", "zh"]
    proc = subprocess.run(run, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "zh/notebooks/a.md: a cell failed when the page ran in Chinese in its folder:" in proc.stderr
    assert "AssertionError: only English" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (book / "zh" / "notebooks" / "a.ipynb").exists()


def test_book_check_warns_about_a_changed_english_paragraph_without_failing(book, monkeypatch, capsys):
    from booktools import __main__ as devtools

    zh_stored(book)
    edition.sync(book, "zh", book / "zh" / "notebooks" / "a.md", execute=False)
    monkeypatch.setattr(devtools, "check", lambda root: [])  # the rest of the check: tests/test_book.py
    english = book / "notebooks" / "a.md"
    english.write_text(english.read_text("utf-8").replace("# English", "# English, revised"), encoding="utf-8")
    assert devtools.main(["check", "--book", str(book)]) == 0
    printed = capsys.readouterr()
    assert "warning: zh: zh/notebooks/a.md: the English page notebooks/a.md changed its prose" in printed.err
    assert "book check passed" in printed.out


def test_an_edition_with_no_page_yet_is_one_problem_naming_the_pages(book):
    import shutil

    shutil.rmtree(book / "zh" / "notebooks")
    assert edition_book.problems(book) == ["zh: 1 English pages have no zh page: notebooks/a.md"]
    assert edition_book.warnings(book) == []
