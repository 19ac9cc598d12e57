"""``labkit lab``: the make-free way into the book (the browser suite opens it for real:
tests/browser/test_browser_labkit_lab.py)."""

import ast
import json
import sys
from pathlib import Path

import pytest

from booklab import launcher as lab
from labkit.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_the_books_settings_have_one_copy():
    copies = [p for p in REPO.rglob("*overrides*.json") if not {".venv", "build", "node_modules"} & set(p.parts)]
    assert copies == [REPO / lab.SETTINGS], copies
    settings = json.loads((REPO / lab.SETTINGS).read_text(encoding="utf-8"))
    assert settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["markdown"] == "Jupytext Notebook"


def test_make_lab_runs_labkit_lab():
    """One place for the flags: the Makefile's lab target calls the command."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "labkit lab" in recipe and "jupyter lab" not in recipe and "--allow-root" not in recipe, recipe


def tiny_book(tmp_path: Path) -> Path:
    """A folder ``labkit lab`` takes for a book: myst.yml, the preface and the settings."""
    book = tmp_path / "book"
    for name, text in (("myst.yml", "version: 1"), (lab.PREFACE, "# preface"), (lab.SETTINGS, "{}")):
        (book / name).parent.mkdir(parents=True, exist_ok=True)
        (book / name).write_text(text + "\n")
    return book


def test_dry_run_keeps_state_in_the_books_build_folder_and_opens_the_preface(tmp_path, capsys, monkeypatch):
    book = tiny_book(tmp_path)
    monkeypatch.chdir(book / "notebooks")  # found from a folder inside the book too
    assert main(["lab", "--dry-run", "--no-browser", "--port", "8123", "--", "--ServerApp.token="]) == 0
    out = capsys.readouterr().out.splitlines()
    env = dict(line.split("=", 1) for line in out[:-1])
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        assert env[name].startswith(str(book.resolve() / "build")), (name, env[name])
    command = out[-1]
    assert "-m jupyterlab" in command and f"--ServerApp.root_dir={book.resolve()}" in command
    assert f"--LabApp.app_settings_dir={book.resolve() / 'jupyter'}" in command  # the book's one copy
    assert "--port=8123 --no-browser" in command and "--ServerApp.token=" in command
    # the same contents manager as make lab: pages open unmodified, one file-browser entry per page
    assert "--ServerApp.contents_manager_class=booklab.contents.BookContentsManager" in command
    assert command.endswith("notebooks/00-preface.md")
    # the token's folder is private; every kernel loads the out-of-order hint
    assert (book / "build" / "jupyter" / "runtime").stat().st_mode & 0o777 == 0o700
    kernel_config = book / "build" / "ipython" / "profile_default" / "ipython_kernel_config.py"
    assert "'booklab.kernel'" in kernel_config.read_text()


def test_allow_root_only_when_asked_or_announced(tmp_path, capsys, monkeypatch):
    book = tiny_book(tmp_path)
    monkeypatch.chdir(book)
    for euid, asked, added, announced in (
        (1000, False, False, False),
        (1000, True, True, False),
        (0, False, True, True),
    ):
        monkeypatch.setattr(lab.os, "geteuid", lambda euid=euid: euid, raising=False)
        assert main(["lab", "--dry-run", *(["--allow-root"] if asked else [])]) == 0
        out, err = capsys.readouterr()
        assert ("--allow-root" in out.splitlines()[-1]) == added, (euid, asked)
        assert ("--allow-root" in (err.splitlines() or [""])[0]) == announced, (euid, asked, err)


def test_a_folder_that_is_not_the_book_is_refused_by_name(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="--book") as given:
        lab.find_book(tmp_path)
    assert str(tmp_path) in str(given.value)
    monkeypatch.chdir(tmp_path)  # outside a clone: the message says where it looked
    with pytest.raises(ValueError, match="any folder above it") as here:
        lab.find_book(None)
    assert str(tmp_path.resolve()) in str(here.value) and "--book PATH" in str(here.value)


def test_labkit_lab_uses_only_the_standard_library():
    tree = ast.parse(lab.__file__ and open(lab.__file__, encoding="utf-8").read())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    # IPython only inside the kernel extension's function (it runs in the kernel), never at the top
    assert not any(
        "IPython" in ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    )
    assert imported - {"IPython"} <= set(sys.stdlib_module_names) | {"__future__", "labkit"}, imported


def test_make_keeps_the_runtime_folder_private(tmp_path):
    """Every make target creates build/jupyter/runtime (the server's token files go there) as 0700."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    subprocess.run(["make", "-n", "clean"], cwd=tmp_path, capture_output=True, check=True)
    assert (tmp_path / "build" / "jupyter" / "runtime").stat().st_mode & 0o777 == 0o700


def test_the_chinese_edition_opens_its_preface_or_says_it_is_missing(tmp_path, capsys):
    book = tmp_path / "book"
    for name, text in (("myst.yml", "version: 1"), (lab.PREFACE, "# preface"), (lab.SETTINGS, "{}")):
        (book / name).parent.mkdir(parents=True, exist_ok=True)
        (book / name).write_text(text, encoding="utf-8")
    assert lab.first_page(book, "en") == lab.PREFACE and capsys.readouterr().err == ""
    assert lab.first_page(book, "zh") == lab.PREFACE, "no zh/ tree yet: the English preface"
    err = capsys.readouterr().err
    assert "no zh edition yet" in err and "zh/notebooks/00-preface.md" in err and len(err.splitlines()) == 1
    zh = book / "zh" / "notebooks" / "00-preface.md"
    zh.parent.mkdir(parents=True)
    zh.write_text("# 前言", encoding="utf-8")
    assert lab.first_page(book, "zh") == Path("zh/notebooks/00-preface.md")
    command = lab.lab_command(book, page=lab.first_page(book, "zh"))
    assert (
        command[-1] == "zh/notebooks/00-preface.md"
        and "--LabApp.default_url=/lab/tree/zh/notebooks/00-preface.md" in command
    )
    with pytest.raises(ValueError, match="--edition must be one of"):
        lab.first_page(book, "fr")
