"""A page run out of order: in a real kernel, loaded as ``labkit lab`` loads it (IPython's
profile in ``build/ipython``), a ``NameError`` names the cell of the page that defines the name."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from booklab import launcher as lab
from booklab.kernel import defined_names, where_defined

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "notebooks" / "07-traces" / "03-text-token-by-token.md"


def run_in_kernel(tmp_path, session: Path | None, code: list[str]) -> list[dict]:
    """Start a python3 kernel with the book's IPython profile, run ``code``, return the errors."""
    from jupyter_client.manager import start_new_kernel

    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(lab.KERNEL_CONFIG, encoding="utf-8")
    # booklab runs from the clone: `labkit lab` puts the book's folder on the kernels' path
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "MPLBACKEND": "agg", "PYTHONPATH": str(REPO)}
    if session is not None:
        env["JPY_SESSION_NAME"] = str(session)  # what JupyterLab gives a notebook's kernel
    manager, client = start_new_kernel(kernel_name="python3", env={**os.environ, **env}, cwd=str(tmp_path))
    errors = []
    try:
        for source in code:
            reply = client.execute_interactive(source, timeout=60, output_hook=lambda m: None)
            if reply["content"]["status"] == "error":
                errors.append(reply["content"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return errors


@pytest.mark.slow
def test_a_name_error_out_of_order_names_the_cell_that_defines_it(tmp_path):
    errors = run_in_kernel(tmp_path, PAGE, ['stepper = player("decode", run=run)', "nosuchname_at_all"])
    assert [e["ename"] for e in errors] == ["NameError", "NameError"]
    hinted = re.search(r"defined in cell (\d+)", errors[0]["evalue"])
    assert hinted, errors[0]["evalue"]
    cells = json.loads(PAGE.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]
    assert "player" in defined_names("".join(cells[int(hinted.group(1)) - 1]["source"]))
    assert "defined in" not in errors[1]["evalue"]  # a name the page never defines: left as it is


@pytest.mark.slow
def test_without_a_page_the_error_is_left_as_it_is(tmp_path):
    (error,) = run_in_kernel(tmp_path, None, ["player"])
    assert error["ename"] == "NameError" and "defined in" not in error["evalue"]


@pytest.mark.parametrize(
    "cells, where",
    [
        (
            [{"cell_type": "markdown", "source": "# Top\n## Part two"}, {"cell_type": "code", "source": "x = 1"}],
            "cell 2",
        ),
        ([{"cell_type": "code", "source": "def f():\n    x = 1"}], None),  # a local is not the page's
        ([{"cell_type": "code", "source": "%matplotlib inline\nfrom a import x"}], "cell 1"),
    ],
)
def test_where_a_name_is_defined(cells, where):
    found = where_defined(cells, "x")
    assert (found or "").split(" (")[0] == (where or ""), found
    if where == "cell 2":
        assert "Part two" in found


def test_the_hint_counts_the_cells_of_the_readers_working_copy(tmp_path):
    from booklab.kernel import page_cells

    (tmp_path / "myst.yml").write_text("version: 1\n")
    (tmp_path / "notebooks").mkdir()
    book_cells = [{"cell_type": "code", "source": "x = 1"}]
    mine = [{"cell_type": "markdown", "source": "my note"}, *book_cells]
    (tmp_path / "notebooks" / "p.md").write_text("---\njupytext:\n---\nx\n")
    (tmp_path / "notebooks" / "p.ipynb").write_text(json.dumps({"cells": book_cells}))
    assert where_defined(page_cells(str(tmp_path / "notebooks" / "p.md")), "x") == "cell 1"
    (tmp_path / "my-edits" / "notebooks").mkdir(parents=True)
    (tmp_path / "my-edits" / "notebooks" / "p.ipynb").write_text(json.dumps({"cells": mine}))
    assert where_defined(page_cells(str(tmp_path / "notebooks" / "p.md")), "x") == "cell 2"
