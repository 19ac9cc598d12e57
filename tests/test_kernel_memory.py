"""A page run again in the same kernel does not keep what its last run freed (issue 43: page 07-10's
kernel held 226 MB after one Run All and 449 MB after five): the book's kernel extension gives the
heap's freed pages back after every cell, a closed page's kernel is shut down, an idle one culled."""

import json
import os
import re
from pathlib import Path

import pytest

from booklab import kernel
from booklab import launcher as lab

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "notebooks" / "07-traces" / "10-tool-failures.ipynb"


def _rss_mb(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * 4096 / 1e6


def _run_page(client, cells: list[str]) -> None:
    for source in cells:
        reply = client.execute_interactive(source, timeout=120, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]


@pytest.mark.skipif(kernel._glibc() is None, reason="malloc_trim is glibc's (Linux)")
def test_a_page_run_again_keeps_the_memory_of_about_one_run():
    from jupyter_client.manager import start_new_kernel

    notebook = json.loads(PAGE.read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # booklab runs from the clone, as under `labkit lab`
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(PAGE.parent), env=env)
    try:
        _run_page(client, ["%load_ext booklab.kernel", "import matplotlib; matplotlib.use('Agg')"])
        pid = manager.provisioner.process.pid
        sizes = []
        for _ in range(2):
            _run_page(client, cells)
            sizes.append(_rss_mb(pid))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert sizes[1] - sizes[0] < 20, f"the kernel grew from {sizes[0]:.0f} to {sizes[1]:.0f} MB when the page ran again"


def test_closed_pages_shut_their_kernels_and_idle_ones_are_culled():
    overrides = json.loads((ROOT / "jupyter" / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/notebook-extension:tracker"]["kernelShutdown"] is True
    command = lab.lab_command(ROOT)
    assert "--MappingKernelManager.cull_idle_timeout=1800" in command
    assert re.search(r"KERNEL_CULLING", (ROOT / "binder" / "postBuild").read_text(encoding="utf-8"))
