"""The contents manager of ``make lab``: pages open unmodified, the file browser lists one
entry per page (the browser suite checks the same in JupyterLab)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from labkit.cli.lab_contents import BookContentsManager, kernel_language_info, with_kernel_language_info

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def book(tmp_path):
    for rel in ("jupytext.toml", "notebooks/00-preface.md", "notebooks/00-preface.ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, tmp_path / rel)
    return BookContentsManager(root_dir=str(tmp_path))


def test_a_page_comes_with_what_the_kernel_will_report(book):
    """JupyterLab writes the kernel's language_info into the notebook when the kernel starts;
    handed the same dict, it changes nothing and the page stays unmodified."""
    model = asyncio.run(book.get("notebooks/00-preface.md"))
    assert model["type"] == "notebook"
    info = model["content"]["metadata"]["language_info"]
    assert info == kernel_language_info()
    assert {"version", "mimetype", "codemirror_mode", "file_extension"} <= set(info)


def test_the_file_browser_lists_one_entry_per_page(book):
    listing = asyncio.run(book.get("notebooks"))
    names = sorted(item["name"] for item in listing["content"])
    assert names == ["00-preface.md"], names
    # hidden from listings only: the stored outputs are still read and the file still opens
    assert asyncio.run(book.get("notebooks/00-preface.ipynb"))["type"] == "notebook"


def test_only_python3_notebooks_get_the_kernel_language_info():
    info = {"name": "python", "version": "3.99.0"}
    nb = {"metadata": {"kernelspec": {"name": "python3"}, "language_info": {"name": "python"}}}
    assert with_kernel_language_info(nb, info) and nb["metadata"]["language_info"] == info
    assert not with_kernel_language_info(nb, info)  # already the kernel's: unchanged
    other = {"metadata": {"kernelspec": {"name": "ir"}, "language_info": {"name": "R"}}}
    assert not with_kernel_language_info(other, info)
    assert other["metadata"]["language_info"] == {"name": "R"}
