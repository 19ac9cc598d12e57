"""The words the book uses for JupyterLab's menu are the menu's (issue 47, first hour): with a
page open as a notebook, JupyterLab's File menu item that reloads it reads as README and
``labkit reset`` say ("Reload Markdown File from Disk": a page's ``.md`` is a Markdown File to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from booklab import edits

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
PREFACE = "notebooks/00-preface.md"
LABELS = """() => ['docmanager:reload', 'docmanager:restore-checkpoint'].map(
  (id) => window.jupyterapp.commands.label(id))"""


def test_the_reload_item_is_named_as_the_file_menu_names_it(notebooks):
    page = notebooks.open(PREFACE)
    reload_label, revert_label = page.evaluate(LABELS)
    assert edits.RELOAD == f"File → {reload_label}", reload_label
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"*File → {reload_label}*" in readme, reload_label
    assert f"*File → {revert_label}*" in readme.replace("\n", " "), revert_label
