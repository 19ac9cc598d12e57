"""``labkit lab``: the make-free way into the book (the browser suite opens it for real:
tests/browser/test_browser_labkit_lab.py)."""

import ast
import json
import sys
from pathlib import Path

import pytest

from labkit.cli import lab, main

REPO = Path(__file__).resolve().parents[1]


def test_the_packaged_settings_are_the_books_settings():
    packaged = json.loads(lab.SETTINGS.read_text(encoding="utf-8"))
    assert packaged == json.loads((REPO / "jupyter" / "overrides.json").read_text(encoding="utf-8")), (
        "labkit/cli/lab_overrides.json must equal jupyter/overrides.json (make setup installs that one)"
    )
    assert packaged["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["markdown"] == "Jupytext Notebook"


def test_the_settings_ship_as_package_data():
    import tomllib

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["labkit"]
    relative = lab.SETTINGS.relative_to(REPO / "labkit")
    assert any(
        relative.match(p) or (p.startswith("**/") and relative.name.endswith(p[3:].lstrip("*"))) for p in patterns
    ), patterns


def test_dry_run_keeps_state_in_the_books_build_folder_and_opens_the_preface(tmp_path, capsys, monkeypatch):
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "notebooks" / "00-preface.md").write_text("# preface\n")
    (book / "myst.yml").write_text("version: 1\n")
    monkeypatch.chdir(book)
    assert main(["lab", "--dry-run", "--no-browser", "--port", "8123", "--", "--ServerApp.token="]) == 0
    out = capsys.readouterr().out.splitlines()
    env = dict(line.split("=", 1) for line in out[:-1])
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        assert env[name].startswith(str(book.resolve() / "build")), (name, env[name])
    command = out[-1]
    assert "-m jupyterlab" in command and f"--ServerApp.root_dir={book.resolve()}" in command
    assert f"--LabApp.app_settings_dir={book.resolve() / 'build' / 'jupyter' / 'lab-settings'}" in command
    assert "--port=8123 --no-browser" in command and "--ServerApp.token=" in command
    # the same contents manager as make lab: pages open unmodified, one file-browser entry per page
    assert "--ServerApp.contents_manager_class=labkit.cli.lab_contents.BookContentsManager" in command
    assert command.endswith("notebooks/00-preface.md")


def test_settings_are_installed_into_the_books_state_folder(tmp_path):
    target = lab.install_settings(tmp_path / "lab-settings")
    assert json.loads(target.read_text()) == json.loads(lab.SETTINGS.read_text())


def test_a_folder_that_is_not_the_book_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="--book must be the book's folder"):
        lab.find_book(tmp_path)


def test_labkit_lab_uses_only_the_standard_library():
    tree = ast.parse(lab.__file__ and open(lab.__file__, encoding="utf-8").read())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
