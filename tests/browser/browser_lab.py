"""A JupyterLab server and a headless Chromium for the browser suite.

``LabServer`` copies the book's reader-facing files into a scratch folder (so nothing the
browser does can touch the working tree), starts ``jupyter lab`` on 127.0.0.1 on a free port
with fresh config/data/runtime folders and no token, and stops it by PID.  The JupyterLab
settings override (``jupyter/overrides.json``) is the one installed into the environment,
exactly as ``make setup`` installs it for ``make lab``.

The small JavaScript snippets below read JupyterLab's own models through
``window.jupyterapp`` (exposed with ``--LabApp.expose_app_in_browser``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("LABKIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# What the reader's copy of the book holds: the pages, their pairing rule, the toc, the
# JupyterLab settings and the measuring kit page 13 imports from the book's folder.  The
# fixtures and labkit are reached through the installed (editable) package.
COPIED = ("notebooks", "zh", "jupytext.toml", "myst.yml", "jupyter", "benchmarks", "booklab", "harness")
# Test-only JupyterLab user settings: never autosave (a browser run must not rewrite a page)
# and keep every cell in the DOM so cells can be addressed by index.
USER_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
SERVER_PID_FILE = REPO / "build" / "browser" / "jupyter-server.pid"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def installed_overrides() -> Path:
    """Where ``make setup`` puts the book's JupyterLab settings override."""
    return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def overrides_problem() -> str | None:
    want = json.loads((REPO / "jupyter" / "overrides.json").read_text(encoding="utf-8"))
    path = installed_overrides()
    if not path.exists():
        return f"{path} is missing: run `make setup` (it copies jupyter/overrides.json there)"
    have = json.loads(path.read_text(encoding="utf-8"))
    if have != want:
        return f"{path} differs from jupyter/overrides.json: run `make setup`"
    return None


def copy_book(dest: Path) -> Path:
    """Copy the reader-facing files; plain copies, so every file gets a fresh mtime in
    sorted order, as a fresh ``git clone`` gives them."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            for path in sorted(src.rglob("*")):
                if ".ipynb_checkpoints" in path.parts or "__pycache__" in path.parts:
                    continue
                target = dest / path.relative_to(REPO)
                if path.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
        elif src.exists():
            shutil.copyfile(src, dest / name)
    return dest


class PipOnlyEnv:
    """A throwaway virtual environment that gets ``pip install -e <repo>[read]`` and nothing
    else (no ``make setup``), installed in the background from the moment it is made.

    This interpreter's pip installs into it (``--python``): the environment needs no pip of its
    own, and ``--no-compile`` leaves the bytecode to the runs that use it, which compile only
    what they import.  The suite starts it when it collects a test using it and runs that test
    last, so the install (about 25 s from pip's cache) overlaps the pages' runs.
    """

    def __init__(self, folder: Path):
        import venv

        self.folder = folder
        self.env = folder / "venv"
        venv.EnvBuilder(with_pip=False).create(self.env)
        python = self.env / ("Scripts" if os.name == "nt" else "bin") / "python"
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
        self._install = subprocess.Popen(
            [*pip, "install", "--quiet", "--no-compile", "-e", f"{REPO}[read]"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait(self) -> Path:
        """The environment, once the install has finished; AssertionError with pip's words if it failed."""
        _, stderr = self._install.communicate(timeout=900)
        assert self._install.returncode == 0, (stderr or "")[-3000:]
        return self.env

    def remove(self) -> None:
        if self._install.poll() is None:
            self._install.kill()
            self._install.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class LabServer:
    """One ``jupyter lab`` process serving a copy of the book."""

    def __init__(self, scratch: Path, user_settings: dict | None = None):
        self.scratch = scratch
        self.user_settings = {**USER_SETTINGS, **(user_settings or {})}
        self.root = copy_book(scratch / "book")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = scratch / "jupyter-server.log"
        self.process: subprocess.Popen | None = None

    def env(self) -> dict[str, str]:
        dirs = {name: self.scratch / name for name in ("config", "data", "runtime", "ipython")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        for rel, value in self.user_settings.items():
            target = dirs["config"] / "lab" / "user-settings" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(value), encoding="utf-8")
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(dirs["config"]),
            JUPYTER_DATA_DIR=str(dirs["data"]),
            JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
            IPYTHONDIR=str(dirs["ipython"]),
            # share the build's font cache: a fresh one costs seconds per kernel
            MPLCONFIGDIR=str(REPO / "build" / "matplotlib"),
            # the contents manager is booklab's, which runs from the clone (as `labkit lab` sets it)
            PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(REPO)) if p),
            MPLBACKEND="module://matplotlib_inline.backend_inline",
            JUPYTER_PLATFORM_DIRS="1",
            PYTHONHASHSEED="0",
            PYDEVD_DISABLE_FILE_VALIDATION="1",
        )
        return env

    def command(self) -> list[str]:
        return [
            str(Path(sys.executable).parent / "jupyter"),
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.allow_root=True",
            "--LabApp.expose_app_in_browser=True",
            # as `make lab` and `labkit lab`: pages open unmodified, one entry per page
            "--ServerApp.contents_manager_class=booklab.contents.BookContentsManager",
        ]

    def start(self, timeout: float = 60.0) -> None:
        (REPO / "build" / "matplotlib").mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            self.command(), env=self.env(), cwd=self.root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        SERVER_PID_FILE.parent.mkdir(parents=True, exist_ok=True)
        SERVER_PID_FILE.write_text(f"{self.process.pid}\n", encoding="utf-8")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}:\n{self.log()}")
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s:\n{self.log()}")

    def api(self, method: str, path: str):
        request = urllib.request.Request(self.base + path, method=method)
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def stop(self) -> None:
        """SIGTERM by PID (the server then shuts its kernels down), SIGKILL its process
        group if it lingers."""
        proc, self.process = self.process, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        # kernels live in the server's process group; none may outlive the suite
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        SERVER_PID_FILE.unlink(missing_ok=True)


# ---- JupyterLab, read through its own models --------------------------------------------

JS_CURRENT_READY = """(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  const w = app.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path || !w.content || !w.content.model) return false;
  const s = w.sessionContext && w.sessionContext.session;
  return !!(s && s.kernel && s.kernel.status === 'idle' && w.content.widgets.length > 0);
}"""

JS_CURRENT_KIND = """(path) => {
  const app = window.jupyterapp;
  const w = app.shell.currentWidget;
  const viewer = app.docRegistry.defaultWidgetFactory(path);
  return {
    path: w && w.context ? w.context.path : null,
    notebook: !!(w && w.node.classList.contains('jp-NotebookPanel')),
    default_viewer: viewer ? viewer.name : null,
  };
}"""

JS_RUN_FINISHED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const s = w.sessionContext.session;
  if (!s || !s.kernel || s.kernel.status !== 'idle') return false;
  const cells = w.content.model.cells;
  let failed = false, pending = false;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    for (let j = 0; j < c.outputs.length; j++) if (c.outputs.get(j).type === 'error') failed = true;
    if (c.sharedModel.getSource().trim() && c.executionCount == null) pending = true;
  }
  return failed || !pending;
}"""

JS_OUTPUT_PROBLEMS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.model.cells;
  const found = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (c.sharedModel.getSource().trim() && c.executionCount == null)
      found.push({cell: i, kind: 'not executed'});
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'error')
        found.push({cell: i, kind: 'error', text: o.ename + ': ' + o.evalue});
      if (o.output_type === 'stream' && o.name === 'stderr')
        found.push({cell: i, kind: 'stderr', text: [].concat(o.text).join('').slice(0, 400)});
    }
  }
  return found;
}"""

JS_SHUTDOWN_SESSIONS = """async () => {
  if (window.jupyterapp) await window.jupyterapp.serviceManager.sessions.shutdownAll();
}"""

JS_POPUPS = """() => Array.from(document.querySelectorAll(
    '.jp-Dialog, .Toastify__toast, .jp-toast-message, .jp-Notification-Toast'))
  .map(e => (e.innerText || e.className).slice(0, 200))"""


JS_DIRTY = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const tab = document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current');
  return {model: w.context.model.dirty, dot: !!(tab && tab.classList.contains('jp-mod-dirty'))};
}"""

JS_KERNEL_INFO_ARRIVED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const info = w && w.content && w.content.model && w.content.model.getMetadata('language_info');
  return !!(info && info.version);
}"""


def opened_unmodified(page) -> dict:
    """Wait until the kernel's ``language_info`` reached the notebook (what used to mark every
    page modified), then read the model's dirty flag and the tab's unsaved dot."""
    page.wait_for_function(JS_KERNEL_INFO_ARRIVED, timeout=30_000)
    page.wait_for_timeout(500)
    return page.evaluate(JS_DIRTY)


JS_FIGURES = """() => {
  const cells = Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell'));
  const found = [];
  cells.forEach((c, index) => {
    for (const img of Array.from(c.querySelectorAll('.jp-OutputArea-output img'))) {
      if (!img.naturalWidth) continue;
      const area = img.closest('.jp-OutputArea-output');
      const r = img.getBoundingClientRect(), a = area.getBoundingClientRect();
      found.push({cell: index, natural: [img.naturalWidth, img.naturalHeight],
                  rendered: [Math.round(r.width), Math.round(r.height)],
                  area: Math.round(a.width), sized: img.hasAttribute('width'),
                  overflow: r.right > a.right + 1 || area.scrollWidth > area.clientWidth + 1});
    }
  });
  return found;
}"""

# A figure's smallest text is 8 pt at 100 dpi (11.1 px in the PNG; tests/test_figure_text.py);
# shown at no less than this fraction of its natural width it stays at 9 px or more on screen.
MIN_FIGURE_SCALE = 9 / (8 * 100 / 72)


def figure_problems(figures: list[dict]) -> list[str]:
    """Images shrunk so far that their smallest text falls below 9 px, or overflowing.  An
    image the page sizes itself (``PNG(data, width=…)``: a picture, not a figure with text) is
    only checked for overflow."""
    problems = []
    for f in figures:
        scale = f["rendered"][0] / f["natural"][0]
        if scale < MIN_FIGURE_SCALE - 0.005 and not f.get("sized"):
            problems.append(
                f"cell {f['cell']}: a {f['natural'][0]} px figure shown at {f['rendered'][0]} px "
                f"(×{scale:.2f}: its 8 pt text falls to {scale * 8 * 100 / 72:.1f} px)"
            )
        if f["overflow"]:
            problems.append(
                f"cell {f['cell']}: a figure overflows its output area ({f['rendered'][0]} px > {f['area']} px)"
            )
    return problems


def _wait_opened(page, md_rel: str, timeout_ms: int) -> None:
    """Wait until ``md_rel`` is the current notebook with an idle kernel; fail at once,
    with its text, if JupyterLab shows a dialog instead (e.g. "File Load Error")."""
    page.wait_for_function(
        f"(path) => ({JS_CURRENT_READY})(path) || !!document.querySelector('.jp-Dialog')",
        arg=md_rel,
        timeout=timeout_ms,
    )
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        raise AssertionError(f"opening {md_rel} showed a dialog: {dialog.first.inner_text()[:800]}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)


def open_page(page, server: LabServer, md_rel: str, timeout_ms: int = 60_000) -> None:
    """Open ``md_rel`` the way ``make lab`` opens the preface: its ``/lab/tree`` address."""
    page.goto(f"{server.base}/lab/tree/{md_rel}?reset", wait_until="domcontentloaded")
    _wait_opened(page, md_rel, timeout_ms)


JS_APP_READY = """() => !!(window.jupyterapp && window.jupyterapp.shell
  && document.querySelector('#jp-main-dock-panel'))"""

JS_CLOSE_LAUNCHERS = """() => {
  for (const w of Array.from(window.jupyterapp.shell.widgets('main')))
    if (w.node.classList.contains('jp-Launcher') || w.node.querySelector('.jp-Launcher')) w.dispose();
}"""

JS_OPEN = """async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }"""


def process_tree_mb(pid: int) -> tuple[float, int]:
    """(resident MB of ``pid`` and every process below it, how many of them are kernels): what a
    hub counts against one user, the server and the kernels of the pages left open."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, grew = {pid}, True
    while grew:
        below = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= below
        grew = bool(below)
    total, kernels = 0.0, 0
    for member in tree:
        try:
            total += int(Path(f"/proc/{member}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            kernels += "ipykernel" in Path(f"/proc/{member}/cmdline").read_text(errors="replace")
        except OSError:
            continue
    return total, kernels


JS_CLOSE_CURRENT = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w) return;
  if (w.sessionContext && w.sessionContext.session) await w.sessionContext.shutdown();
  w.dispose();  // no save prompt: a browser run never writes a page
}"""


def open_in_tab(page, md_rel: str, timeout_ms: int = 60_000) -> None:
    """Open ``md_rel`` in an already loaded JupyterLab tab, with its default viewer
    (File → Open does the same)."""
    page.evaluate(JS_OPEN, md_rel)
    _wait_opened(page, md_rel, timeout_ms)


def run_all(page, timeout_ms: int = 120_000) -> None:
    """Clear the stored outputs, then Run → Run All Cells (command ``runmenu:run-all``)."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.commands.execute('runmenu:run-all')")
    page.wait_for_function(JS_RUN_FINISHED, timeout=timeout_ms)


def cell(page, index: int):
    """The ``index``-th cell (counting from 0) of the open notebook."""
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(index)
