"""The contents manager ``labkit lab`` gives JupyterLab: Jupytext's, with four rules for a reader.

- **The book's pages are never written.**  A save whose cell sources equal the book's writes nothing;
  a save with the reader's edits goes to ``<book>/my-edits/<page>.ipynb``, which the page opens from
  until ``labkit reset`` sets it aside.  So ``git status`` stays clean and a hub's ``git pull`` never
  meets a conflict.
- **Pages open clean.**  The notebook is handed over with the ``language_info`` the kernel will
  report (in memory), so starting the kernel marks no page unsaved.
- **One entry per page.**  ``*.ipynb`` and ``my-edits`` join ``hide_globs``: the browser lists the ``.md``.
- **Glossary hover text** is added as a page is read and taken out before a save (``booklab.glossary``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import AsyncTextFileContentsManager
from traitlets import default

from booklab import glossary
from booklab.edits import EDITS, SET_ASIDE, is_page, set_aside, working_copy


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
    """What the reader writes in a notebook: each cell's type and source (a list of lines or one string)."""
    return [(c.get("cell_type", ""), "".join(c.get("source", ""))) for c in notebook.get("cells", [])]


class BookContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager; the book's pages are read-only, the reader's edits of a page
    live in its working copy, and the paired ``.ipynb`` files stay out of the file browser."""

    @default("hide_globs")
    def _hide_globs_default(self):
        return ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "*.ipynb", EDITS]  # jupyter_server's, and ours

    def _copy_of(self, page: Path) -> str | None:
        """The working copy (an API path) of ``page`` (a file's path) when the reader has one."""
        copy = working_copy(page) if is_page(page) else None
        return copy.relative_to(Path(self.root_dir).resolve()).as_posix() if copy and copy.is_file() else None

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # noqa: A002
        path = path.strip("/")
        page = Path(self._get_os_path(path))
        copy = self._copy_of(page)
        if copy is None:
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            aside = working_copy(page).with_name(page.stem + SET_ASIDE) if is_page(page) else None
            if aside is not None and aside.is_file():  # reset while open: the page changed on disk since it was read
                model["last_modified"] = max(model["last_modified"], datetime.fromtimestamp(aside.stat().st_mtime, UTC))
        else:  # the plain file manager: a working copy is one .ipynb, paired with nothing
            model = await AsyncLargeFileManager.get(self, copy, content=content, type="notebook", **kwargs)
            model.update(path=path, name=PurePosixPath(path).name)
        if content and model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            with_kernel_language_info(model["content"], kernel_language_info())
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
        """*Revert Markdown File to Checkpoint* on a page: back to the book's page, edits set aside."""
        path = path.strip("/")
        page = Path(self._get_os_path(path))
        copy = self._copy_of(page)
        if copy is not None:
            set_aside(Path(self.root_dir) / copy)
        elif not is_page(page):
            await super().restore_checkpoint(checkpoint_id, path)
