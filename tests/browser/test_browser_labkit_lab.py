"""The way in without ``make``: ``labkit lab`` from an environment where only pip was run.

A throwaway virtual environment gets ``pip install -e <repo>[read]`` and nothing else (no
``make setup``: no settings copied into it; ``browser_lab.PipOnlyEnv``). In a copy of the
book, its ``labkit lab`` must open the preface as a notebook — the MyST page through the
Jupytext Notebook viewer — in the browser it asks for (a stand-in that records the address,
which Chromium then opens), with its Jupyter state in the book's build/ folder and none in
the environment.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from browser_lab import JS_APP_READY, JS_CURRENT_KIND, copy_book, free_port

pytestmark = pytest.mark.browser
PREFACE = "notebooks/00-preface.md"


def test_labkit_lab_opens_the_preface_as_a_notebook(pip_only_env, tmp_path, browser_context):
    book = copy_book(tmp_path / "book")
    opened = tmp_path / "opened-url.txt"
    fake_browser = tmp_path / "browser.py"
    fake_browser.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\npathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n"
    )
    fake_browser.chmod(0o755)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "MPL"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a reader's Python caches bytecode
    env["BROWSER"] = f"{fake_browser} %s"
    labkit = pip_only_env / "bin" / "labkit"
    server = subprocess.Popen(
        [
            str(labkit),
            "lab",
            "--port",
            str(port),
            "--",
            "--ip=127.0.0.1",
            "--ServerApp.port_retries=0",
            "--ServerApp.token=",
            "--ServerApp.password=",
            "--LabApp.expose_app_in_browser=True",
        ],
        cwd=book,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    page = None
    try:
        deadline = time.monotonic() + 120
        while not opened.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.5)
        assert opened.exists(), f"labkit lab never asked for a browser (exit {server.poll()})"
        # JupyterLab hands the browser a redirect page in its runtime folder (here: the book's
        # build/, not the home folder) that points at the preface's address
        url = opened.read_text().strip()
        redirect = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
        assert url.startswith("file:") and redirect.parent == book / "build" / "jupyter" / "runtime", url
        # it holds the token: the folder and the file are the user's alone
        assert redirect.parent.stat().st_mode & 0o777 == 0o700 and redirect.stat().st_mode & 0o077 == 0
        target = re.search(r'href="([^"]+)"', redirect.read_text()).group(1)
        assert re.fullmatch(rf"http://(127\.0\.0\.1|localhost):{port}/lab/tree/{PREFACE}", target), target

        page = browser_context.new_page()
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_url(f"**/lab/tree/{PREFACE}*", timeout=60_000)
        page.wait_for_function(JS_APP_READY, timeout=60_000)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
        kind = page.evaluate(JS_CURRENT_KIND, PREFACE)
        assert kind == {"path": PREFACE, "notebook": True, "default_viewer": "Jupytext Notebook"}, kind
        title = page.locator(".jp-NotebookPanel").get_by_role(
            "heading", name=re.compile(r"^Preface: one generation, followed")
        )
        title.first.wait_for(state="visible", timeout=90_000)  # rendered as a heading, not source
        # the settings came from the book's one copy: nothing was copied into the environment
        assert not (pip_only_env / "share" / "jupyter" / "lab" / "settings" / "overrides.json").exists()
    finally:
        if page is not None:
            page.close()
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the session labkit lab started: JupyterLab
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
