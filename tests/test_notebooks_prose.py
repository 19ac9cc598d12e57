"""``python -m booktools build --prose``: a Markdown-only edit reaches the .ipynb
without re-executing it; a code edit is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from booktools.notebooks import pair_problems, sync_prose

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def page(tmp_path):
    for suffix in (".md", ".ipynb"):
        shutil.copyfile(REPO / "notebooks" / f"00-preface{suffix}", tmp_path / f"00-preface{suffix}")
    return tmp_path / "00-preface.md"


def test_a_prose_edit_is_copied_and_the_outputs_kept(page):
    before = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    page.write_text(
        page.read_text(encoding="utf-8").replace("Who it is for.", "Who it is for, really."), encoding="utf-8"
    )
    assert pair_problems(page)
    sync_prose(page)
    after = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    assert pair_problems(page) == []
    assert "Who it is for, really." in after.cells[0].source
    assert [c.get("outputs") for c in after.cells] == [c.get("outputs") for c in before.cells]
    assert [c.id for c in after.cells] == [c.id for c in before.cells]


def test_a_code_edit_is_refused(page):
    page.write_text(
        page.read_text(encoding="utf-8").replace("show_source(rms_norm)", "show_source(rms_norm)  # x"),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="make notebooks"):
        sync_prose(page)
