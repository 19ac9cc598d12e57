"""The contents manager ``make lab`` and ``labkit lab`` give JupyterLab: Jupytext's, with two
fixes for a reader.

- **Pages open clean.**  A page's ``.ipynb`` stores ``language_info`` as ``{"name":
  "python"}`` only (the rest names the Python of the machine that built it).  When the kernel
  starts, JupyterLab writes the kernel's full ``language_info`` into the notebook — a change,
  so every page showed the unsaved dot at once and asked to be saved on closing.  Here the
  notebook is handed to JupyterLab with the ``language_info`` the ``python3`` kernel of this
  environment will report, so the kernel changes nothing.  Neither file on disk changes (the
  ``.md`` keeps no metadata but its front matter; ``make notebooks`` writes the ``.ipynb``).
- **One entry per page.**  Every page is a MyST ``.md`` paired with an ``.ipynb`` that stores
  its outputs; the file browser lists the ``.md`` only (``*.ipynb`` joins ``hide_globs``).
  Hidden files are only left out of listings: Jupytext still reads the outputs, and an
  ``.ipynb`` still opens from a link or ``File → Open from Path``.
- **Glossary hover text** is added as a page is read and taken out before it is saved
  (``labkit.cli.glossary``).

Used as ``jupyter lab --ServerApp.contents_manager_class=labkit.cli.lab_contents.BookContentsManager``.
"""

from __future__ import annotations

from pathlib import Path

from jupytext.async_contentsmanager import AsyncTextFileContentsManager
from traitlets import List, Unicode, default

from labkit.cli import glossary

HIDDEN = ["*.ipynb"]


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


class BookContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager; notebooks carry the kernel's ``language_info`` and the
    paired ``.ipynb`` files stay out of the file browser."""

    hide_globs = List(Unicode(), config=True, help="Glob patterns to hide in file and directory listings.")

    @default("hide_globs")
    def _hide_globs_default(self):
        return ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", *HIDDEN]

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # noqa: A002
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if content and model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            with_kernel_language_info(model["content"], kernel_language_info())
            glossary.notebook_with_hover(model["content"], Path(self._get_os_path(path)))
        return model

    async def save(self, model, path=""):
        if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            glossary.notebook_without_hover(model["content"])  # the hover text is never written
        return await super().save(model, path)
