"""A student's first hour with the book, as the issue found it (issue 47, item 6): ``labkit`` in
JupyterLab's terminal, the address ``make lab`` prints, JupyterLab's real menu label for
reloading a page, ``labkit reset`` and JupyterLab's checkpoints, the reader's answer file kept
out of git, and no page or README saying a player needs a kernel."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from booklab import edits
from booklab import launcher as lab
from labkit.cli import main

REPO = Path(__file__).resolve().parents[1]
FRONT = "---\njupytext:\n  formats: ipynb,md:myst\n---\n"


def book_copy(tmp_path: Path) -> Path:
    """A folder ``labkit lab`` serves: myst.yml, the preface, the settings, and the book's JupyterLab
    (``booklab/``, which comes with the clone)."""
    book = tmp_path / "book"
    (book / "notebooks").mkdir(parents=True)
    (book / "jupyter").mkdir()
    shutil.copy(REPO / "myst.yml", book / "myst.yml")
    shutil.copy(REPO / lab.PREFACE, book / lab.PREFACE)
    shutil.copy(REPO / lab.SETTINGS, book / lab.SETTINGS)
    shutil.copytree(REPO / "booklab", book / "booklab", ignore=shutil.ignore_patterns("__pycache__"))
    return book


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``labkit lab`` started as a reader would without a terminal attached (JupyterLab then
    gives its terminals a login shell), with a PATH that does not hold this environment."""

    def __init__(self, book: Path, port: int):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "MPL"))}
        env.update(PATH="/usr/local/bin:/usr/bin:/bin", SHELL="/bin/bash")
        self.port, self.token, self.output = port, "first-hour-token", []
        command = [str(Path(sys.executable).parent / "labkit"), "lab", "--no-browser", "--port", str(port)]
        command += ["--", "--ip=127.0.0.1", "--ServerApp.port_retries=0", f"--ServerApp.token={self.token}"]
        self.proc = subprocess.Popen(
            command, cwd=book, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True).start()

    def wait(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status?token={self.token}", timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        raise AssertionError("labkit lab did not start:\n" + "".join(self.output)[-3000:])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _terminal_says(server: Server, command: str, until: str, timeout: float = 30) -> str:
    """Open a JupyterLab terminal, type ``command`` and return what it printed up to ``until``."""
    from tornado.websocket import websocket_connect

    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/api/terminals?token={server.token}", method="POST", data=b""
    )
    name = json.loads(urllib.request.urlopen(request, timeout=10).read())["name"]
    ws = await websocket_connect(f"ws://127.0.0.1:{server.port}/terminals/websocket/{name}?token={server.token}")
    seen = ""
    try:
        ws.write_message(json.dumps(["stdin", command + "\r"]))
        deadline = time.monotonic() + timeout
        while until not in seen and time.monotonic() < deadline:
            message = await asyncio.wait_for(ws.read_message(), timeout=deadline - time.monotonic())
            if message is None:
                break
            kind, *rest = json.loads(message)
            seen += rest[0] if kind == "stdout" and rest else ""
    finally:
        ws.close()
    return seen


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt" or not Path("/bin/bash").exists(), reason="a POSIX login shell")
def test_labkit_is_on_the_terminal_path_and_the_printed_address_opens_the_preface(tmp_path):
    server = Server(book_copy(tmp_path), _free_port())
    try:
        server.wait()
        # the answer ends in 42, which the echoed command line does not hold
        said = asyncio.run(_terminal_says(server, "echo found:$(command -v labkit):$((6*7))", ":42"))
        assert f"found:{Path(sys.executable).parent / 'labkit'}:42" in said, said[-2000:]
        printed = "".join(server.output)
        urls = re.findall(rf"http://127\.0\.0\.1:{server.port}(/\S*)\?token=", printed)
        assert urls and all(url == "/lab/tree/notebooks/00-preface.md" for url in urls), printed[-2000:]
    finally:
        server.stop()


def test_the_lab_puts_its_environment_first_on_the_path_of_every_route(tmp_path, monkeypatch):
    book = book_copy(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # make lab: the environment never activated
    env = lab.lab_environment(book)
    assert env["PATH"].split(os.pathsep)[:3] == [str(Path(sys.executable).parent), "/usr/bin", "/bin"]
    assert (Path(env["LABKIT_BIN"]) / "labkit").exists()
    # a login shell's profile sets PATH anew: the terminal puts the environment back in front
    shell = lab.terminal_shell({"SHELL": "/bin/bash"})
    proc = subprocess.run(
        shell,
        input="echo PATH=$PATH\nexit\n",
        env={"PATH": "/usr/bin:/bin", "LABKIT_BIN": env["LABKIT_BIN"], "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    [path] = [line.removeprefix("PATH=") for line in proc.stdout.splitlines() if line.startswith("PATH=")]
    assert path.split(":")[0] == env["LABKIT_BIN"], proc.stdout + proc.stderr
    assert lab.terminal_shell({"SHELL": "/usr/bin/fish"}) == ["/usr/bin/fish"]


def test_the_reload_menu_item_is_named_as_jupyterlab_names_it_for_a_page(capsys, tmp_path):
    """JupyterLab labels the command ``Reload %1 from Disk`` with the file type's name: a page's
    ``.md`` is a "Markdown File" to it, even opened as a notebook."""
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    bundles = "".join(p.read_text(encoding="utf-8", errors="replace") for p in static.glob("*.js"))
    assert "Reload %1 from Disk" in bundles and '"Markdown File"' in bundles.replace("__(", "(")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "Reload Notebook from Disk" not in readme and "Reload Markdown File from Disk" in readme
    assert edits.RELOAD == "File → Reload Markdown File from Disk"
    book = book_copy(tmp_path)
    assert main(["reset", "--all", "--book", str(book)]) == 0
    assert edits.RELOAD in capsys.readouterr().out


def test_reset_lists_no_jupyterlab_checkpoint_as_an_edited_page(tmp_path, capsys):
    book = book_copy(tmp_path)
    checkpoints = book / "notebooks" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "00-preface-checkpoint.md").write_text(FRONT + "# a checkpoint\n", encoding="utf-8")
    for copy in ("notebooks/00-preface.ipynb", "notebooks/.ipynb_checkpoints/00-preface-checkpoint.ipynb"):
        (book / edits.EDITS / copy).parent.mkdir(parents=True, exist_ok=True)
        (book / edits.EDITS / copy).write_text('{"cells": []}', encoding="utf-8")
    assert main(["reset", "--book", str(book)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[:-1] == ["notebooks/00-preface.md"], listed
    assert not edits.is_page(checkpoints / "00-preface-checkpoint.md")


@pytest.mark.parametrize("name", ["my-answers.py", "my-answers-week2.py"])
def test_the_readers_answer_file_is_kept_out_of_git(name):
    proc = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", name], capture_output=True)
    if proc.returncode == 128:
        pytest.skip("not a git clone")
    assert proc.returncode == 0, f"{name} is not git-ignored"
    assert subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", "notebooks/00-preface.md"]).returncode == 1


# A sentence that says a player or widget needs a (live) kernel, or that a static figure stands
# beside each of them: neither is true since the players run in the static site.
STALE = re.compile(
    r"(?:widgets?|players?)\b[^.]{0,120}?\bneeds? (?:a |the )?(?:live |running )?kernel\b"
    r"|\bthey need a (?:live |running )?kernel\b"
    r"|beside every (?:widget|player)\b|static figure of its default state",
    re.IGNORECASE,
)
PREFACE = "notebooks/00-preface.md"


def _prose_files() -> list[str]:
    pages = sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "notebooks").rglob("*.md")
        if ".ipynb_checkpoints" not in p.parts
    )
    return ["README.md", "CONTRIBUTING.md", *pages]


def stale_claims(text: str) -> list[str]:
    return [" ".join(m.group(0).split()) for m in STALE.finditer(text)]


def test_the_stale_claim_is_recognised():
    assert stale_claims("Some pages carry widgets: a stepper. They need a live kernel. Beside every widget is")
    assert stale_claims("live widgets need a kernel, which is why every widget has a static figure of its default")
    assert not stale_claims("a player needs no kernel (its steps are computed when the book is built)")
    assert not stale_claims("A player spends no kernel time on a step.")


@pytest.mark.parametrize("rel", _prose_files())
def test_no_page_or_readme_says_a_player_needs_a_kernel(rel):
    assert stale_claims((REPO / rel).read_text(encoding="utf-8")) == []
