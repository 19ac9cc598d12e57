"""What the published site knows of the repository it is built from.

``myst.yml`` names no repository (a fork publishes its own).  For one build, ``publish_config``
adds the repository's link (``github:``, from which mystmd makes every page's "edit this page"
and source links), the Binder launch button (``jupyter: binder: repo:``) and a "Report an
issue" action.  ``repository_of`` finds the repository: the one given, else
``$GITHUB_REPOSITORY`` (set in every GitHub Actions job), else the clone's ``origin`` remote
when it is on GitHub.  ``edit_source_links`` points the site's edit links at each page's MyST
``.md`` (the source people edit), not at the ``.ipynb`` the site is built from.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_GITHUB_REMOTE = re.compile(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([^/\s]+/[^/\s]+?)(?:\.git)?/?$"
)


def checked_repository(repository: str) -> str:
    if not _REPOSITORY.fullmatch(repository) or repository.endswith((".", "/")):
        raise ValueError(f"repository must be a GitHub repository as owner/name, got {repository!r}")
    return repository


def repository_of(root: Path, given: str | None = None, environ: dict | None = None) -> str | None:
    """The GitHub ``owner/name`` the site at ``root`` is built from, or None when none is known."""
    if given is not None:
        return checked_repository(given)
    environ = os.environ if environ is None else environ
    if environ.get("GITHUB_REPOSITORY"):
        return checked_repository(environ["GITHUB_REPOSITORY"])
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _GITHUB_REMOTE.match(proc.stdout.strip()) if proc.returncode == 0 else None
    return match.group(1) if match and _REPOSITORY.fullmatch(match.group(1)) else None


def publish_config(text: str, repository: str | None) -> str:
    """``myst.yml``'s text with the repository's link, launch button and issue action for
    ``repository`` (GitHub's ``owner/name``).  With no repository, ``text`` unchanged."""
    if repository is None:
        return text
    url = f"https://github.com/{checked_repository(repository)}"
    lines = text.splitlines(keepends=True)
    for top in ("project:\n", "site:\n"):
        if top not in lines:
            raise ValueError(f"myst.yml has no top-level {top.strip()} key to add the repository's links to")
    for key in ("  jupyter:", "  github:", "  actions:"):
        if any(line.startswith(key) for line in lines):
            raise ValueError(f"myst.yml already sets {key.strip()[:-1]}; give no repository")
    at = lines.index("project:\n") + 1
    lines[at:at] = [f"  github: {url}\n", "  jupyter:\n", "    binder:\n", f"      repo: {repository}\n"]
    at = lines.index("site:\n") + 1
    lines[at:at] = ["  actions:\n", "    - title: Report an issue\n", f"      url: {url}/issues/new\n"]
    return "".join(lines)


def edit_source_links(html: Path, repository: str) -> int:
    """Point every "edit this page" and source link of the built site under ``html`` at the
    page's ``.md``; the number of files changed."""
    pattern = re.compile(rf"(https://github\.com/{re.escape(repository)}/(?:edit|blob)/[^\"'\s<>]+?)\.ipynb\b")
    changed = 0
    for path in sorted(html.rglob("*")):
        if path.suffix not in (".html", ".json", ".js") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        # every toc page is an .ipynb paired with its .md (the book check refuses an unpaired one)
        new = pattern.sub(lambda m: m.group(1) + ".md", text)
        if new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
            changed += 1
    return changed
