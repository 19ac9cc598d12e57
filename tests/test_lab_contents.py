"""The contents manager of ``make lab``: pages open unmodified, the file browser lists one
entry per page (the browser suite checks the same in JupyterLab)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from booklab.contents import BookContentsManager, kernel_language_info, with_kernel_language_info

REPO = Path(__file__).resolve().parents[1]


def copy_book(folder: Path) -> Path:
    for rel in ("jupytext.toml", "myst.yml", "notebooks/00-preface.md", "notebooks/00-preface.ipynb"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, folder / rel)
    return folder


@pytest.fixture
def book(tmp_path):
    return BookContentsManager(root_dir=str(copy_book(tmp_path)))


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


PAGE = "notebooks/00-preface.md"


def _files(root):
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def test_saving_a_page_that_was_only_run_writes_nothing(book):
    """Autosave after Run All: outputs and metadata changed, cell sources did not."""
    root = Path(book.root_dir)
    before = _files(root)
    model = asyncio.run(book.get(PAGE))
    nb = model["content"]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "this machine\n"}]
    nb["metadata"].pop("jupytext", None)
    saved = asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    assert saved["path"] == PAGE
    assert _files(root) == before, "a run-only save changed a file of the book"
    for path in (PAGE, PAGE.replace(".md", ".ipynb")):
        assert asyncio.run(book.get(path, content=False))["last_modified"] == saved["last_modified"]


def test_a_readers_edit_is_kept_in_its_working_copy_and_reset_sets_it_aside(book, capsys):
    from booklab.edits import working_copy
    from labkit.cli import main

    root = Path(book.root_dir)
    before = _files(root)
    nb = asyncio.run(book.get(PAGE))["content"]
    front = dict(nb["metadata"]["kernelspec"])
    nb["cells"][0]["source"] = "# my own title\n"
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    after = _files(root)
    assert {k: v for k, v in after.items() if not k.startswith("my-edits/")} == before
    copy = working_copy(root / PAGE)
    assert set(after) - set(before) == {copy.relative_to(root).as_posix()}
    reopened = asyncio.run(book.get(PAGE))  # the page opens with the edit, from the .md or the .ipynb
    assert reopened["path"] == PAGE and reopened["content"]["cells"][0]["source"] == "# my own title\n"
    assert reopened["content"]["metadata"]["kernelspec"] == front
    assert asyncio.run(book.get(PAGE.replace(".md", ".ipynb")))["content"]["cells"][0]["source"] == "# my own title\n"
    assert asyncio.run(book.get("notebooks"))["content"] and all(
        "my-edits" not in item["path"] for item in asyncio.run(book.get(""))["content"]
    )

    assert main(["reset", "--book", str(root)]) == 0  # lists the edited pages
    assert PAGE in capsys.readouterr().out
    opened = asyncio.run(book.get(PAGE, content=False))["last_modified"]
    assert main(["reset", "--book", str(root), str(root / PAGE)]) == 0
    # a tab still holding the edits sees the page changed on disk: JupyterLab asks before saving
    assert asyncio.run(book.get(PAGE, content=False))["last_modified"] > opened
    assert not copy.exists() and copy.with_name(copy.stem + ".before-reset.ipynb").is_file()  # one undo kept
    assert asyncio.run(book.get(PAGE))["content"]["cells"][0]["source"] != "# my own title\n"
    assert {k: v for k, v in _files(root).items() if not k.startswith("my-edits/")} == before


def test_undoing_every_edit_brings_the_page_back(book):
    nb = asyncio.run(book.get(PAGE))["content"]
    original = nb["cells"][0]["source"]
    nb["cells"][0]["source"] = "edited\n"
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    nb["cells"][0]["source"] = original
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    assert asyncio.run(book.get(PAGE))["content"]["cells"][0]["source"] == original
    from booklab.edits import edited_pages

    assert edited_pages(Path(book.root_dir)) == []


def test_reset_refuses_what_is_not_a_page_and_resets_all_without_touching_other_files(book, tmp_path):
    from booklab.edits import edited_pages
    from labkit.cli import main

    assert main(["reset", "--book", str(tmp_path), "README.md"]) == 2  # not a page: named error
    nb = asyncio.run(book.get(PAGE))["content"]
    nb["cells"][0]["source"] = "edited\n"
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    mine = tmp_path / "notebooks" / "mine.txt"
    mine.write_text("a reader's own file\n")
    assert edited_pages(tmp_path) == [tmp_path / PAGE]
    assert main(["reset", "--book", str(tmp_path), "--all"]) == 0
    assert edited_pages(tmp_path) == [] and mine.read_text() == "a reader's own file\n"


def test_a_book_below_the_servers_root_is_kept_the_same_way(tmp_path):
    """On a hub the server's root is the home folder and the book a folder in it."""
    copy_book(tmp_path / "class-copy")
    home = BookContentsManager(root_dir=str(tmp_path))
    before = _files(tmp_path)
    page = "class-copy/" + PAGE
    nb = asyncio.run(home.get(page))["content"]
    asyncio.run(home.save({"type": "notebook", "format": "json", "content": nb}, page))
    assert _files(tmp_path) == before
    nb["cells"][0]["source"] = "edited\n"
    asyncio.run(home.save({"type": "notebook", "format": "json", "content": nb}, page))
    assert set(_files(tmp_path)) - set(before) == {"class-copy/my-edits/notebooks/00-preface.ipynb"}
    assert asyncio.run(home.get(page))["content"]["cells"][0]["source"] == "edited\n"
    (tmp_path / "mine.ipynb").write_text(json.dumps(nb))  # a reader's own notebook is saved as usual
    asyncio.run(home.save({"type": "notebook", "format": "json", "content": nb}, "mine.ipynb"))
    assert "class-copy/my-edits/mine.ipynb" not in _files(tmp_path)


def test_revert_to_checkpoint_brings_the_books_page_back(book):
    """JupyterLab's File → Revert Notebook to Checkpoint: the edits are set aside, the book untouched."""
    from booklab.edits import working_copy

    root = Path(book.root_dir)
    before = _files(root)
    checkpoint = asyncio.run(book.create_checkpoint(PAGE))
    nb = asyncio.run(book.get(PAGE))["content"]
    nb["cells"][0]["source"] = "edited\n"
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, PAGE))
    asyncio.run(book.restore_checkpoint(checkpoint["id"], PAGE))
    assert not working_copy(root / PAGE).exists()
    assert asyncio.run(book.get(PAGE))["content"]["cells"][0]["source"] != "edited\n"
    assert {k: v for k, v in _files(root).items() if not k.startswith("my-edits/")} == before


def test_a_readers_own_notebook_beside_the_pages_is_saved_as_usual(book):
    """Not a page of the book (no front matter): JupyterLab's New Notebook in notebooks/ saves in place."""
    root = Path(book.root_dir)
    nb = asyncio.run(book.get(PAGE))["content"]
    nb["cells"] = nb["cells"][:1]
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, "notebooks/Untitled.ipynb"))
    nb["cells"][0]["source"] = "my own notebook\n"
    asyncio.run(book.save({"type": "notebook", "format": "json", "content": nb}, "notebooks/Untitled.ipynb"))
    assert "my own notebook" in (root / "notebooks" / "Untitled.ipynb").read_text()
    assert not (root / "my-edits").exists()
