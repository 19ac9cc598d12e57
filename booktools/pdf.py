"""The book as a PDF, offline: ``myst build --tex`` with no template (myst.yml's ``pdf-*`` exports:
the pages' LaTeX, no template download), wrapped by ``myst/pdf/book.tex`` and typeset with XeLaTeX
(Debian's ``texlive-xetex``; the traces' Chinese tokens in WenQuanYi Micro Hei, the figures' font).

Written to ``_build/pdf/inside-one-generation.pdf``; the LaTeX and XeLaTeX's log stay in
``_build/pdf/tex/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from booktools import book, players

PDF_NAME = "inside-one-generation.pdf"
WRAPPER = Path("myst") / "pdf" / "book.tex"
NEEDS = "apt-get install --no-install-recommends texlive-xetex fonts-wqy-microhei fonts-dejavu-core"


def missing_tools() -> list[str]:
    """What the PDF build lacks on this machine (empty when it can run)."""
    missing = [] if shutil.which("xelatex") else ["xelatex (texlive-xetex)"]
    fonts = (
        subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True).stdout
        if shutil.which("fc-list")
        else ""
    )
    missing += [f"the font {name}" for name in ("WenQuanYi Micro Hei", "DejaVu Serif") if name not in fonts]
    return missing + ([] if book.myst_executable() else ["mystmd (pip install mystmd)"])


def preface_title(root: Path) -> str:
    """The preface's chapter heading (an article's export leaves its title out), from its first ``# ``."""
    source = root / book.toc_files(book.load_config(root))[0]
    text = source.with_suffix(".md").read_text(encoding="utf-8")
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "Preface")
    for char, escaped in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("_", r"\_")):
        title = title.replace(char, escaped)
    return f"\\chapter*{{{title}}}\n\\addcontentsline{{toc}}{{chapter}}{{{title}}}\n"


def build_pdf(root: Path, timeout: int = 600) -> Path:
    """Typeset the book at ``root``; the PDF's path.  RuntimeError naming what failed."""
    missing = missing_tools()
    if missing:
        raise RuntimeError(f"the PDF needs {', '.join(missing)}: {NEEDS}")
    tex = root / "_build" / "pdf" / "tex"
    shutil.rmtree(tex, ignore_errors=True)
    players.pages(root)  # the pages name their players' bundles (a PDF shows none, but mystmd reads them)
    offline = {"API_URL": "http://127.0.0.1:9", "MYSTMD_DISABLE_UPDATE_CHECK": "1", "NO_UPDATE_NOTIFIER": "1"}
    proc = subprocess.run(
        [book.myst_executable(), "build", "--tex", "--ci"],
        cwd=root,
        env={**os.environ, **offline, "CI": "true"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if not (tex / "book.tex").is_file() or not (tex / "preface.tex").is_file():
        raise RuntimeError(
            "myst build --tex wrote no book.tex and preface.tex:\n" + (proc.stdout + proc.stderr)[-2000:]
        )
    version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    (tex / "version.tex").write_text(version + "\n", encoding="utf-8")
    (tex / "preface-title.tex").write_text(preface_title(root), encoding="utf-8")
    shutil.copy(root / WRAPPER, tex / "inside-one-generation.tex")
    for _ in range(2):  # the second pass writes the table of contents
        run = subprocess.run(
            ["xelatex", "-interaction=nonstopmode", "-halt-on-error", "inside-one-generation.tex"],
            cwd=tex,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if run.returncode != 0:
            raise RuntimeError(f"xelatex failed (log: {tex / 'inside-one-generation.log'}):\n{run.stdout[-2500:]}")
    pdf = root / "_build" / "pdf" / PDF_NAME
    (tex / PDF_NAME).replace(pdf)
    return pdf


def main(root: Path) -> int:
    try:
        pdf = build_pdf(root)
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        print(f"the book's PDF: {err}", file=sys.stderr)
        return 1
    print(f"wrote {pdf.relative_to(root)}")
    return 0
