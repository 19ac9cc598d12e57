"""The contents manager ``make lab`` and ``labkit lab`` give JupyterLab: Jupytext's, with three
rules for a reader.

- **The book's pages are never written.**  A page (a notebook under the ``notebooks/`` of a
  book's folder, the one holding ``myst.yml``; the server's root is the book or a folder above
  it) is read from the book.  A save whose cell sources equal the book's writes nothing
  (running a page, clicking its players and autosave change no file); a save with the reader's
  own edits goes to the page's working copy, ``<book>/my-edits/<page>.ipynb`` (one file: the
  reader's cells, outputs and metadata, front matter included), and the page opens from there
  until ``labkit reset`` (or *File → Revert Notebook to Checkpoint*) sets it aside.  So ``git
  status`` stays clean, a hub's ``git pull`` (nbgitpuller) never meets a conflict, and a page
  comes back without git.
- **Pages open clean.**  A page's ``.ipynb`` stores ``language_info`` as ``{"name":
  "python"}`` only; when the kernel starts, JupyterLab writes the kernel's full
  ``language_info`` into the notebook, a change that marked every page unsaved.  The notebook
  is handed to JupyterLab with what the ``python3`` kernel will report (in memory only).
- **One entry per page.**  The file browser lists the ``.md`` of each page: ``*.ipynb`` and
  ``my-edits`` join ``hide_globs`` (an ``.ipynb`` still opens from a link or *Open from Path*).
- **Glossary hover text** is added as a page is read and taken out before a save is compared
  or written (``labkit.cli.glossary``): it is a build product, never in a file.

Used as ``jupyter lab --ServerApp.contents_manager_class=labkit.cli.lab_contents.BookContentsManager``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import AsyncTextFileContentsManager
from traitlets import List, Unicode, default

from labkit.cli import glossary
from labkit.cli.reset import EDITS, SET_ASIDE, is_page, set_aside, working_copy

HIDDEN = ["*.ipynb", EDITS]


def kernel_language_info() -> dict:
    """What this environment's ``python3`` kernel (ipykernel) reports as ``language_info``."""
    from ipykernel.ipkernel import IPythonKernel

    return dict(IPythonKernel.language_info)


def with_kernel_language_info(notebook: dict, info: dict) -> bool:
    """Give a ``python3`` notebook the kernel's ``language_info``; ``True`` if it changed.
    A notebook for another kernel, or naming another language, is left alone."""
    metadata = notebook.setdefault("metadata", {})
    if metadata.get("kernelspec", {}).get("name") != "python3":
        return False
    stored = metadata.get("language_info") or {}
    if stored.get("name", "python") != "python" or stored == info:
        return False
    metadata["language_info"] = dict(info)
    return True


def cell_sources(notebook: dict) -> list[tuple[str, str]]:
    """What the reader writes in a notebook: each cell's type and source."""

    def text(source) -> str:
        return source if isinstance(source, str) else "".join(source)

    return [(c.get("cell_type", ""), text(c.get("source", ""))) for c in notebook.get("cells", [])]


class BookContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager; the book's pages are read-only, the reader's edits of a page
    live in its working copy, and the paired ``.ipynb`` files stay out of the file browser."""

    hide_globs = List(Unicode(), config=True, help="Glob patterns to hide in file and directory listings.")

    @default("hide_globs")
    def _hide_globs_default(self):
        return ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", *HIDDEN]

    def _copy_of(self, path: str) -> str | None:
        """The working copy (an API path) of page ``path`` when the reader has one."""
        page = Path(self._get_os_path(path))
        if not is_page(page) or not working_copy(page).is_file():
            return None
        return working_copy(page).relative_to(Path(self.root_dir).resolve()).as_posix()

    def _set_aside(self, path: str) -> Path | None:
        """The edits of page ``path`` that ``labkit reset`` set aside, if any."""
        page = Path(self._get_os_path(path))
        aside = working_copy(page).with_name(page.stem + SET_ASIDE) if is_page(page) else None
        return aside if aside is not None and aside.is_file() else None

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # noqa: A002
        path = path.strip("/")
        copy = self._copy_of(path)
        if copy is None:
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            aside = self._set_aside(path)
            if aside is not None:  # reset while open: the page changed on disk since JupyterLab read it
                model["last_modified"] = max(model["last_modified"], datetime.fromtimestamp(aside.stat().st_mtime, UTC))
        else:  # the plain file manager: a working copy is one .ipynb, paired with nothing
            model = await AsyncLargeFileManager.get(self, copy, content=content, type="notebook", **kwargs)
            model.update(path=path, name=PurePosixPath(path).name)
        if content and model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            with_kernel_language_info(model["content"], kernel_language_info())
            page = Path(self._get_os_path(path))
            glossary.change_markdown(model["content"], lambda text: glossary.with_hover(text, page))
        return model

    async def save(self, model, path=""):
        path = path.strip("/")
        if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            glossary.change_markdown(model["content"], glossary.without_hover)  # the hover text is never written
        page = Path(self._get_os_path(path))
        if model.get("type") != "notebook" or "content" not in model or not is_page(page):
            return await super().save(model, path)
        original = await super().get(path, content=True, type="notebook")
        copy = working_copy(page)
        if cell_sources(model["content"]) == cell_sources(original["content"]):
            copy.unlink(missing_ok=True)  # the reader undid their edits: the page is the book's again
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            await AsyncLargeFileManager.save(self, model, copy.relative_to(Path(self.root_dir).resolve()).as_posix())
        return await self.get(path, content=False)

    async def restore_checkpoint(self, checkpoint_id, path):
        """*Revert Notebook to Checkpoint* on a page: back to the book's page, edits set aside."""
        path = path.strip("/")
        copy = self._copy_of(path)
        if copy is not None:
            set_aside(Path(self.root_dir) / copy)
        elif not is_page(Path(self._get_os_path(path))):
            await super().restore_checkpoint(checkpoint_id, path)
