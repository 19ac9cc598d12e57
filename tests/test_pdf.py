"""The book as a PDF, built offline (issue 47, item 5): ``python -m booktools build --pdf`` in a
copy of the book; the PDF has every page, the traces' Chinese tokens in an embedded CJK font, the
formulas and the figures, and the pages ``pdftoppm`` draws are not blank."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from booktools import pdf

REPO = Path(__file__).resolve().parents[1]
POPPLER = all(shutil.which(tool) for tool in ("pdftoppm", "pdftotext", "pdfinfo", "pdffonts"))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(pdf.missing_tools()), reason=f"the PDF needs {pdf.missing_tools()}: {pdf.NEEDS}"),
    pytest.mark.skipif(not POPPLER, reason="apt-get install poppler-utils"),
]


def _run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def book_pdf(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("book")
    shutil.copytree(REPO / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(REPO / "myst", root / "myst")
    shutil.copytree(REPO / "labkit" / "reader" / "players", root / "labkit" / "reader" / "players")
    for name in ("myst.yml", "references.bib", "pyproject.toml"):
        shutil.copy(REPO / name, root / name)
    return pdf.build_pdf(root)


def _pages(path: Path) -> list[str]:
    return _run("pdftotext", "-layout", str(path), "-").split("\f")


def _ink(path: Path, page: int, tmp_path: Path) -> float:
    """The share of a page's pixels that are not white, drawn by pdftoppm at 40 dpi."""
    from PIL import Image

    _run("pdftoppm", "-r", "40", "-png", "-f", str(page), "-l", str(page), str(path), str(tmp_path / "page"))
    [png] = tmp_path.glob("page*.png")
    image = Image.open(png).convert("L")
    dark = sum(image.histogram()[:200])
    png.unlink()
    return dark / (image.width * image.height)


def test_the_pdf_holds_every_page_with_its_cjk_tokens_formulas_and_figures(book_pdf, tmp_path):
    pages = int(re.search(r"Pages:\s+(\d+)", _run("pdfinfo", str(book_pdf)))[1])
    assert pages >= 150, pages
    text = _pages(book_pdf)
    everything = "\f".join(text)
    for title in ("Preface", "The trace record", "Lab: the gradient of cross-entropy", "Glossary"):
        assert title in everything, title
    cjk = [sum(0x4E00 <= ord(c) <= 0x9FFF for c in page) for page in text]
    assert sum(cjk) >= 300, "the traces' Chinese tokens are missing from the PDF"
    fonts = _run("pdffonts", str(book_pdf))
    assert re.search(r"WenQuanYiMicroHei\s.*\syes\s+yes", fonts), fonts  # embedded
    log = (book_pdf.parent / "tex" / "inside-one-generation.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in log, re.findall(r"Missing character: There is no .*", log)[:5]
    images = _run("pdfimages", "-list", str(book_pdf)) if shutil.which("pdfimages") else ""
    assert images.count("\n") - 2 >= 15, "fewer figures than the pages store"
    # the title page, the page with the most Chinese and a page with a numbered formula: not blank
    formula = next(i for i, page in enumerate(text) if "∂L" in page or "(13.1)" in page)
    for page in (1, cjk.index(max(cjk)) + 1, formula + 1):
        assert _ink(book_pdf, page, tmp_path) > 0.004, f"page {page} is blank"
