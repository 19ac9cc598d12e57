"""Fixtures of the browser suite: one JupyterLab server and one Chromium for the session.

The suite runs only when ``LABKIT_BROWSER_TESTS=1`` (``scripts/browser-test.sh`` sets it);
under ``make test`` its browser tests are skipped and only the coverage checks, which need
no browser, run.  Tests are ordered page by page so that each notebook is opened and run
once, then every widget on it is moved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser_book import REPO, toc_pages
from browser_lab import (
    CHROMIUM,
    CHROMIUM_ARGS,
    JS_APP_READY,
    JS_CLOSE_CURRENT,
    JS_CLOSE_LAUNCHERS,
    JS_FIGURES,
    JS_OUTPUT_PROBLEMS,
    JS_SHUTDOWN_SESSIONS,
    LabServer,
    PipOnlyEnv,
    open_in_tab,
    open_page,
    opened_unmodified,
    overrides_problem,
    process_tree_mb,
    run_all,
)

ENABLED = os.environ.get("LABKIT_BROWSER_TESTS") == "1"
SCREENSHOTS = REPO / "browser-screenshots"
VIEWPORT = {"width": 1280, "height": 900}
# (page, resident MB of the JupyterLab server and its kernels, kernels alive) after each page's Run All
SESSION_MEMORY: list[tuple[str, float, int]] = []


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives JupyterLab in Chromium (slow)")
    config.addinivalue_line("markers", "after_pages: runs once every page has run (reads what they left)")


def pytest_collection_modifyitems(config, items):
    pages = [p.md for p in toc_pages()]

    def order(item):
        params = getattr(getattr(item, "callspec", None), "params", {})
        md = params.get("page_md") or getattr(params.get("widget"), "page", None)
        kind = 1 if "widget" in params else 0
        rank = pages.index(md) if md in pages else -1
        if "pip_only_env" in item.fixturenames:
            rank = len(pages)  # last: its environment installs while the pages run
        if item.get_closest_marker("after_pages"):
            rank = len(pages) + 1
        return (rank, kind)

    browser_items = [i for i in items if i.get_closest_marker("browser")]
    if not ENABLED:
        skip = pytest.mark.skip(reason="browser suite: run scripts/browser-test.sh")
        for item in browser_items:
            item.add_marker(skip)
        return
    others = [i for i in items if not i.get_closest_marker("browser")]
    items[:] = others + sorted(browser_items, key=order)


_PIP_ONLY: list[PipOnlyEnv] = []


def pytest_collection_finish(session):
    if ENABLED and any("pip_only_env" in getattr(i, "fixturenames", ()) for i in session.items):
        import tempfile

        _PIP_ONLY.append(PipOnlyEnv(Path(tempfile.mkdtemp(prefix="labkit-pip-only-"))))


@pytest.fixture(scope="session")
def pip_only_env() -> Path:
    """The environment ``PipOnlyEnv`` began installing when the suite was collected."""
    if not _PIP_ONLY:
        pytest.fail("pip_only_env: no environment was started at collection")
    try:
        yield _PIP_ONLY[0].wait()
    finally:
        _PIP_ONLY.pop().remove()


def pytest_unconfigure(config):
    while _PIP_ONLY:  # a session that ended before the test used it
        _PIP_ONLY.pop().remove()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    problem = overrides_problem()
    if problem:
        pytest.fail(problem)
    server = LabServer(tmp_path_factory.mktemp("jupyterlab"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium chromium-driver")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def browser_context(browser):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US", timezone_id="UTC")
    yield context
    context.close()


@dataclass
class RunPage:
    """A notebook opened in JupyterLab and run with Run All; ``problems`` lists every
    error or stderr output and every cell left unexecuted."""

    md: str
    page: object
    problems: list = field(default_factory=list)
    screenshot: Path | None = None
    opened: dict = field(default_factory=dict)  # {"model": dirty?, "dot": unsaved dot shown?} on opening
    figures: list = field(default_factory=list)  # every output image after Run All, measured


class Notebooks:
    """Opens and runs each notebook once, in one long-lived JupyterLab tab, and keeps the
    most recent one open for its widgets.  ``open`` instead starts a fresh tab at the
    page's address, as ``make lab`` does."""

    def __init__(self, server: LabServer, context):
        self.server = server
        self.context = context
        self.tab = None
        self.current: RunPage | None = None
        self.errors: list[str] = []  # the long-lived tab's console errors since its current page opened

    def open(self, md: str):
        """A fresh tab with ``md`` opened (not run) — the reader's first screen."""
        self.close()
        page = self.context.new_page()
        open_page(page, self.server, md)
        return page

    def _tab(self):
        if self.tab is None or self.tab.is_closed():
            self.close()
            self.tab = self.context.new_page()
            self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
            self.tab.on("pageerror", lambda e: self.errors.append(str(e)))
            self.tab.goto(f"{self.server.base}/lab?reset", wait_until="domcontentloaded")
            self.tab.wait_for_function(JS_APP_READY, timeout=60_000)
            self.tab.evaluate(JS_CLOSE_LAUNCHERS)  # the first screen shows the page alone
        return self.tab

    def run(self, md: str) -> RunPage:
        if self.current is not None and self.current.md == md:
            return self.current
        if self.current is not None:
            self.current.page.evaluate(JS_CLOSE_CURRENT)
            self.current = None
        page = self._tab()
        self.errors.clear()
        try:
            open_in_tab(page, md)
        except Exception:
            self.tab = None  # a broken tab is not reused
            raise
        SCREENSHOTS.mkdir(exist_ok=True)
        shot = SCREENSHOTS / (md.removeprefix("notebooks/").removesuffix(".md").replace("/", "__") + ".png")
        opened = opened_unmodified(page)
        page.screenshot(path=str(shot))
        run_all(page)
        page.wait_for_timeout(300)  # let images decode before they are measured
        self.current = RunPage(md, page, page.evaluate(JS_OUTPUT_PROBLEMS), shot, opened, page.evaluate(JS_FIGURES))
        SESSION_MEMORY.append((md, *process_tree_mb(self.server.process.pid)))
        return self.current

    def close(self) -> None:
        """Close every tab, shutting down the kernels it started first."""
        self.current = None
        self.tab = None
        for page in list(self.context.pages):
            try:
                page.evaluate(JS_SHUTDOWN_SESSIONS)
            finally:
                page.close()


@pytest.fixture(scope="session")
def notebooks(lab_server, browser_context):
    book = Notebooks(lab_server, browser_context)
    yield book
    book.close()
