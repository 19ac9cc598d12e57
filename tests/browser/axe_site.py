"""The static book for the axe check: every page's content JSON (``myst build --site``, offline),
rendered as the book theme shows it (``harness/axe/render-page.mjs``), served from 127.0.0.1.

``npm_folder`` installs the renderer's pinned packages (``harness/axe/package.json`` and its
lockfile: myst-to-html, KaTeX, axe-core) with ``npm ci`` into ``build/browser/axe-npm``, once per
lockfile (a stamp holds the lockfile's hash).  ``build_site`` writes the players' bundles (as the
book build does), builds the content JSON in a scratch copy of the book (so the repository's
``_build`` is never touched), renders every page, and adds what the site serves beside the pages:
the public files (figures, players' bundles), ``myst/site.css`` and KaTeX's stylesheet from the site
(``booktools.assets.localise``, as the build serves it).  The content JSON is kept in
``build/browser/axe-content`` until a file mystmd reads (or mystmd's version) changes.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.metadata
import json
import shutil
import subprocess
import threading
from pathlib import Path

from booktools import assets, book, players

REPO = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).resolve().parent / "harness" / "axe"
NPM_FOLDER = REPO / "build" / "browser" / "axe-npm"
#: the last content JSON built, by what it was built from (``content_json``)
CONTENT_CACHE = REPO / "build" / "browser" / "axe-content"
#: what mystmd needs to build the site's content JSON
BOOK_FILES = ("myst.yml", "references.bib", "myst", "notebooks")
#: the rules the check runs: WCAG 2.0, 2.1 and 2.2, levels A and AA
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

#: KaTeX's visual copy of a formula (``aria-hidden``; a screen reader reads its MathML copy, which is
#: checked) is left out: it is most of a page's elements, triples axe's time, and takes the prose's
#: colour (no page colours a formula)
EXCLUDE = [[".katex-html"]]
#: starts axe in the page; its violations (or the error it threw) land in window.axeDone
JS_AXE_START = """([tags, exclude]) => {
  window.axeDone = null;
  axe.run({exclude}, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}).then((result) => {
    window.axeDone = {violations: result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
      tags: v.tags, nodes: v.nodes.map((n) => ({target: n.target, html: n.html.slice(0, 300),
      summary: n.failureSummary}))}))};
  }, (error) => { window.axeDone = {error: String(error && error.stack || error)}; });
}"""


def _run(args: list[str], cwd: Path, what: str, timeout: int = 300) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout


def npm_folder(folder: Path = NPM_FOLDER) -> Path:
    """The renderer and its pinned packages, installed (``npm ci``) unless the lockfile is unchanged."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("the axe check renders pages with node: apt-get install nodejs npm")
    lock = (HARNESS / "package-lock.json").read_bytes()
    stamp = folder / "node_modules" / ".labkit-lock-sha256"
    digest = hashlib.sha256(lock + (HARNESS / "package.json").read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(HARNESS / name, folder / name)
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], folder, "npm ci (the axe check's packages)")
        stamp.write_text(digest)
    shutil.copy(HARNESS / "render-page.mjs", folder / "render-page.mjs")
    return folder


def book_digest() -> str:
    """What the content JSON is made from: mystmd's version and every file mystmd reads."""
    digest = hashlib.sha256(importlib.metadata.version("mystmd").encode())
    for name in BOOK_FILES:
        source = REPO / name
        for path in sorted([source] if source.is_file() else source.rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def content_json(scratch: Path, cache: Path = CONTENT_CACHE) -> Path:
    """Every page's content JSON (``<site>/content``, beside ``<site>/public``), built offline in a
    copy of the book at ``scratch``; kept in ``cache`` for as long as no file mystmd reads changes."""
    players.pages(REPO)  # the players' bundles, as the book build writes them first
    kept = cache / book_digest()
    if (kept / "content").is_dir():
        return kept / "content"
    scratch.mkdir(parents=True, exist_ok=True)
    for name in BOOK_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, scratch / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        else:
            shutil.copy(source, scratch / name)
    content, printed = book.site_content(scratch, timeout=300)
    if not content.is_dir() or not any(content.glob("*.json")):
        raise RuntimeError(f"mystmd wrote no content JSON:\n{printed[-3000:]}")
    shutil.rmtree(cache, ignore_errors=True)  # one book's content kept, never a pile of them
    partial = cache.with_name(cache.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(content.parent, partial / kept.name)
    partial.replace(cache)
    return kept / "content"


def build_site(scratch: Path, npm: Path) -> tuple[Path, dict[str, str]]:
    """The rendered site's folder and, for every page, its content JSON's ``location`` (the
    ``.ipynb`` it was built from, e.g. ``notebooks/11-labs/06-dpo.ipynb``) → its file in the site.
    The site's CJK web font is not made: it changes no glyph's colour, size or place axe checks."""
    content = content_json(scratch / "book")
    public = content.parent / "public"
    site = scratch / "site"
    shutil.copytree(public, site)
    pages = sorted(content.glob("*.json"))
    _run(["node", str(npm / "render-page.mjs"), str(site), str(public), *map(str, pages)], npm, "render-page.mjs")
    shutil.copy(REPO / "myst" / "site.css", site / "site.css")
    assets.localise(site, REPO / "build" / "npm")
    where = {}
    for page in pages:
        location = json.loads(page.read_text(encoding="utf-8")).get("location", "")
        where[location.lstrip("/")] = f"{page.stem}.html"
    return site, where


class SiteServer:
    """``folder`` served from 127.0.0.1 on a free port (``.mjs`` as JavaScript)."""

    def __init__(self, folder: Path):
        handler = functools.partial(_Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def log_message(self, *args):
        pass


def start_axe(page, npm: Path) -> None:
    """Start axe-core (the pinned copy) over ``page`` with the WCAG 2 A/AA rules (``axe_result``
    waits for it): pages checked side by side use both cores."""
    page.add_script_tag(path=str(npm / "node_modules" / "axe-core" / "axe.min.js"))
    page.evaluate(JS_AXE_START, [WCAG_TAGS, EXCLUDE])


def axe_result(page, timeout: float = 60_000) -> list[dict]:
    """Every violation axe found in ``page`` (started by ``start_axe``)."""
    page.wait_for_function("() => window.axeDone", timeout=timeout)
    done = page.evaluate("() => window.axeDone")
    if "error" in done:
        raise RuntimeError(f"axe-core failed in {page.url}: {done['error']}")
    return done["violations"]


def run_axe(page, npm: Path) -> list[dict]:
    start_axe(page, npm)
    return axe_result(page)


def check_pages(context, urls: dict[str, str], npm: Path, side_by_side: int = 3) -> dict[str, dict]:
    """Every page of ``urls`` (name → address) opened with its players drawn and checked by axe,
    ``side_by_side`` at a time: name → {"violations": [...], "errors": [script errors]}."""
    results, names = {}, list(urls)
    for start in range(0, len(names), side_by_side):
        opened = []
        for name in names[start : start + side_by_side]:
            page, errors = context.new_page(), []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(urls[name], wait_until="load")
            page.wait_for_function("() => window.playersDone === true", timeout=20_000)
            errors += page.evaluate("() => window.playerErrors")
            start_axe(page, npm)
            opened.append((name, page, errors))
        for name, page, errors in opened:
            try:
                results[name] = {"violations": axe_result(page), "errors": errors}
            finally:
                page.close()
    return results


def blocking(violations: list[dict]) -> list[str]:
    """The serious and critical violations, one line each: rule, impact, first target, how many."""
    return [
        f"{v['id']} ({v['impact']}): {v['nodes'][0]['target'] if v['nodes'] else '?'}"
        f" and {max(len(v['nodes']) - 1, 0)} more — {v['help']}"
        for v in violations
        if v["impact"] in BLOCKING
    ]


def write_report(folder: Path, name: str, violations: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(violations, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
