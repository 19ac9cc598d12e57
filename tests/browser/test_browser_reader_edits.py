"""A reader's session never changes the book's files; a reader's edit is kept; ``labkit reset``.

Three pages are opened in JupyterLab (the book's contents manager, as ``make lab``), run with
Run All, their players clicked, and autosave (set to 2 s here; JupyterLab's default is 120 s)
allowed to save each of them: ``git status`` of the book stays clean.  Then one cell is edited
and saved; reopened, the page shows the edit, the book's ``.md`` (front matter and all) is
unchanged, and ``labkit reset`` brings the page back (run while the page is open, JupyterLab's
next save asks first, and *Revert* shows the book's page).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_book import REPO
from browser_lab import JS_APP_READY, JS_CLOSE_CURRENT, JS_CLOSE_LAUNCHERS, LabServer, open_in_tab, run_all

from booklab import glossary

pytestmark = pytest.mark.browser
PAGES = [
    "notebooks/07-traces/03-text-token-by-token.md",
    "notebooks/07-traces/05-diffusion-denoising-and-decoding.md",
    "notebooks/11-labs/09-speculative-sampling.md",
]
AUTOSAVE = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": True, "autosaveInterval": 2}}
JS_FIRST_SOURCE = "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).sharedModel.getSource()"
JS_EDIT_FIRST = """(text) => {
  const w = window.jupyterapp.shell.currentWidget;
  w.content.model.cells.get(0).sharedModel.setSource(text);
}"""


def git(book, *args) -> str:
    return subprocess.run(["git", *args], cwd=book, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def edit_server(tmp_path):
    server = LabServer(tmp_path, user_settings=AUTOSAVE)
    shutil.copyfile(REPO / ".gitignore", server.root / ".gitignore")
    for command in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "book"],
    ):
        git(server.root, *command)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _click_players(page) -> int:
    """Click the first enabled button (or tick box) of every player or widget the page shows."""
    clicked = 0
    for output in page.locator(".jp-OutputArea-output:has(.lk-player, .jupyter-widgets)").all():
        button = output.locator("button:not([disabled]), input[type=checkbox]").first
        if button.count():
            button.scroll_into_view_if_needed()
            button.click()
            clicked += 1
    return clicked


JS_COUNT_SAVES = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  window.labkitSaves = 0;
  w.context.saveState.connect((_, state) => { if (state === 'completed') window.labkitSaves += 1; });
}"""
JS_SAVED = "() => window.labkitSaves > 0 && !window.jupyterapp.shell.currentWidget.context.model.dirty"


def _autosaved(page) -> None:
    """Wait until the page has been saved since it was opened and has no unsaved change."""
    page.wait_for_function(JS_SAVED, timeout=30_000)


def test_running_pages_changes_no_file_and_an_edit_is_kept_until_reset(edit_server, browser_context):
    book = edit_server.root
    original = (book / PAGES[0]).read_bytes()
    page = browser_context.new_page()
    try:
        page.goto(f"{edit_server.base}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function(JS_APP_READY, timeout=60_000)
        page.evaluate(JS_CLOSE_LAUNCHERS)
        for md in PAGES:
            open_in_tab(page, md)
            page.evaluate(JS_COUNT_SAVES)
            run_all(page)  # outputs change: the page is modified, and autosave saves it
            assert _click_players(page) >= 1, f"{md}: no player to click"
            _autosaved(page)
            page.evaluate(JS_CLOSE_CURRENT)
        assert git(book, "status", "--porcelain", "--untracked-files=all") == "", "a reader's run changed the book"

        open_in_tab(page, PAGES[0])
        page.evaluate(JS_COUNT_SAVES)
        page.evaluate(JS_EDIT_FIRST, "# My own notes on trace one\n")
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        _autosaved(page)
        page.evaluate(JS_CLOSE_CURRENT)
        open_in_tab(page, PAGES[0])
        assert page.evaluate(JS_FIRST_SOURCE) == "# My own notes on trace one\n", "the edit was lost on reopening"
        assert (book / PAGES[0]).read_bytes() == original, "the page's .md (front matter and all) changed"
        assert git(book, "status", "--porcelain", "--untracked-files=all") == ""
        assert (book / "my-edits" / PAGES[0]).with_suffix(".ipynb").is_file()

        # reset from a terminal while the page is still open: the next save asks, Revert shows the book's page
        labkit = [str(Path(sys.executable).parent / "labkit"), "reset", "--book", str(book), PAGES[0]]
        assert subprocess.run(labkit, capture_output=True, text=True, check=False).returncode == 0
        page.evaluate(JS_EDIT_FIRST, "# typed after the reset\n")
        page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=20_000)
        assert "changed" in dialog.inner_text().lower(), dialog.inner_text()
        dialog.get_by_role("button", name="Revert").click()
        stored = json.loads((book / PAGES[0]).with_suffix(".ipynb").read_text(encoding="utf-8"))
        typed = json.dumps("# typed after the reset\n")
        page.wait_for_function(f"() => ({JS_FIRST_SOURCE})() !== {typed}", timeout=20_000)
        # the lab shows the page with the glossary's hover text, made in memory from the book's cell
        shown = glossary.without_hover(page.evaluate(JS_FIRST_SOURCE))
        assert shown == "".join(stored["cells"][0]["source"]), "Revert did not show the book's page"
        page.evaluate(JS_CLOSE_CURRENT)
        assert not (book / "my-edits" / PAGES[0]).with_suffix(".ipynb").exists()
        assert git(book, "status", "--porcelain", "--untracked-files=all") == ""
    finally:
        page.close()
