"""Book re-execution: ``pytest --nbval`` over every notebook, against a floor measured alongside.

The floor is the same number of trivial one-cell notebooks (``1 + 1``, stored output ``2``)
pushed through the same nbval path with the same flags, from the same folder: kernel start,
pytest start and nbval's comparison, with no book in them. ``book / floor`` is the cost of
the book's own work; the target is ≤ 1.5.

The *figures floor* adds to each of those notebooks what a page that draws pays before any of
its own work: the book's pyplot (``labkit.reader.style.plt``) and one trivial figure for each
picture the page stores.  ``figures floor / floor`` is the share of the target that matplotlib
alone takes.

Per-cell times come from pytest's JUnit XML (``time`` = setup + call + teardown, so a
notebook's first cell carries its kernel start).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from benchmarks.stats import CommandFailed, interleaved, ratio, run_command

REPO = Path(__file__).resolve().parents[1]
NBVAL_FLAGS = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg")
TARGET_RATIO = 1.5


#: The environment ``make test`` exports (Makefile), so a run outside make measures the same thing.
def make_environment(repo: Path = REPO) -> dict[str, str]:
    build = repo / "build"
    env = {
        "JUPYTER_CONFIG_DIR": str(build / "jupyter" / "config"),
        "JUPYTER_RUNTIME_DIR": str(build / "jupyter" / "runtime"),
        "IPYTHONDIR": str(build / "ipython"),
        "MPLCONFIGDIR": str(build / "matplotlib"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONHASHSEED": "0",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    for key in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


def book_notebooks(repo: Path = REPO) -> list[Path]:
    """Every stored notebook of the book (``notebooks/**/*.ipynb``), relative to ``repo``, sorted."""
    root = repo / "notebooks"
    return sorted(p.relative_to(repo) for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def write_floor_notebooks(folder: Path, count: int) -> list[Path]:
    """``count`` one-cell notebooks (``1 + 1`` → ``2``) in ``folder``; their paths."""
    import nbformat

    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        cell = nbformat.v4.new_code_cell(
            "1 + 1",
            execution_count=1,
            outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)],
        )
        nb = nbformat.v4.new_notebook(
            cells=[cell],
            metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
        )
        path = folder / f"floor-{i:02d}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


#: what a page that draws pays before its own work: the book's pyplot, then a trivial figure per picture
FIGURE_IMPORT = "from labkit.reader.style import plt as book_pyplot\n\nplt = book_pyplot()"
FIGURE_CELL = "# NBVAL_IGNORE_OUTPUT\nfig, ax = plt.subplots()\nax.plot([0, 1], [0, 1])\nplt.show()"


def pictures(notebook: Path) -> int:
    """How many pictures (``image/png`` outputs) the stored ``notebook`` shows."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    return sum("image/png" in out.get("data", {}) for c in cells if c.cell_type == "code" for out in c.outputs)


def write_figures_floor_notebooks(folder: Path, counts: list[int]) -> list[Path]:
    """One floor notebook per entry of ``counts``; one whose count is n > 0 also imports the book's
    pyplot and draws n trivial figures (their outputs are not compared, only the ``2``)."""
    import nbformat

    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in counts):
        raise ValueError(f"counts must be integers ≥ 0, got {counts!r}")
    paths = write_floor_notebooks(folder, len(counts))
    for path, n in zip(paths, counts, strict=True):
        if n:
            nb = nbformat.read(path, as_version=4)
            figures = [nbformat.v4.new_code_cell(FIGURE_CELL) for _ in range(n)]  # each its own cell ID
            nb.cells[1:] = [nbformat.v4.new_code_cell(FIGURE_IMPORT), *figures]
            nbformat.write(nb, path)
    return paths


def nbval_command(paths, junit: Path | None = None) -> list[str]:
    """The serial ``make test`` nbval command over ``paths`` (no xdist, quiet)."""
    argv = [sys.executable, "-m", "pytest", "-q", *NBVAL_FLAGS]
    if junit is not None:
        argv.append(f"--junitxml={junit}")
    return argv + [str(p) for p in paths]


def junit_failures(xml_path: Path) -> list[str]:
    """ "<classname>::<name>" of every test case that failed or errored in a JUnit XML file."""
    return [
        f"{case.get('classname')}::{case.get('name')}"
        for case in ET.parse(xml_path).getroot().iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]


def junit_cell_times(xml_path: Path, notebooks) -> dict[str, list[float]]:
    """{notebook path: [seconds of code cell 0, 1, …]} read from pytest's JUnit XML.

    JUnit names a test by ``classname`` (the path with '/' → '.') and ``name`` ("Cell N").
    """
    by_class = {str(Path(p)).replace(os.sep, ".").replace("/", "."): str(p) for p in notebooks}
    times: dict[str, dict[int, float]] = {str(p): {} for p in notebooks}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        owner = by_class.get(case.get("classname", ""))
        name = case.get("name", "")
        if owner is None or not name.startswith("Cell "):
            continue
        times[owner][int(name.split()[1])] = float(case.get("time", "0"))
    return {nb: [cells[i] for i in sorted(cells)] for nb, cells in times.items()}


def code_cell_heads(notebook: Path) -> list[str]:
    """The first meaningful line of each code cell of ``notebook`` (what the cell does)."""
    import nbformat

    heads = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        lines = [
            ln.strip()
            for ln in cell.source.splitlines()
            if ln.strip() and not ln.strip().startswith(("#", "import ", "from "))
        ]
        heads.append(lines[0][:70] if lines else "(imports)")
    return heads


def slowest(
    cell_times: dict[str, list[float]], repo: Path, floor_per_notebook: float | None, top: int = 5
) -> list[dict]:
    """The ``top`` slowest notebooks: total seconds, excess over the floor, their slowest cells."""
    rows = []
    for nb, times in cell_times.items():
        if not times:
            continue
        heads = code_cell_heads(repo / nb)
        order = sorted(range(len(times)), key=lambda i: -times[i])[:3]
        rows.append(
            {
                "notebook": nb,
                "seconds": sum(times),
                "over_floor_seconds": None if floor_per_notebook is None else sum(times) - floor_per_notebook,
                "code_cells": len(times),
                "slowest_cells": [
                    {
                        "cell": i,
                        "seconds": times[i],
                        "first_line": heads[i] if i < len(heads) else "?",
                        "note": "includes kernel start" if i == 0 else "",
                    }
                    for i in order
                ],
            }
        )
    rows.sort(key=lambda r: -r["seconds"])
    return rows[:top]


def unavailable(reason: str) -> dict:
    return {
        "available": False,
        "reason": reason,
        "notebooks": 0,
        "wall_seconds": None,
        "floor_seconds": None,
        "figures_floor_seconds": None,
        "figures_ratio": None,
        "failed_cells": [],
        "time_split": None,
        "ratio": None,
        "target_ratio": TARGET_RATIO,
        "meets_target": None,
        "slowest_notebooks": [],
    }


def book_reexecution(repeats: int = 3, repo: Path = REPO, notebooks=None) -> dict:
    """Wall time of nbval over the book, over as many trivial notebooks and over the figures floor,
    interleaved."""
    paths = list(notebooks) if notebooks is not None else book_notebooks(repo)
    if not paths:
        return unavailable("no notebooks under notebooks/")
    env = make_environment(repo)
    (repo / "build").mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=repo / "build"))
    try:
        floor = write_floor_notebooks(scratch / "floor", len(paths))
        floor_rel = [p.relative_to(repo) for p in floor]
        drawn = write_figures_floor_notebooks(scratch / "figures", [pictures(repo / p) for p in paths])
        drawn_rel = [p.relative_to(repo) for p in drawn]
        junits: list[tuple[Path, float]] = []

        def book_run() -> float:
            junit = scratch / f"book-{len(junits)}.xml"
            # exit 1 = some cells failed their comparison: they still ran, the time counts
            elapsed = run_command(nbval_command(paths, junit), cwd=repo, env=env, ok_codes=(0, 1))
            junits.append((junit, elapsed))
            return elapsed

        def floor_run() -> float:
            return run_command(nbval_command(floor_rel), cwd=repo, env=env)

        def figures_run() -> float:
            return run_command(nbval_command(drawn_rel), cwd=repo, env=env)

        try:
            stats = interleaved({"floor": floor_run, "figures": figures_run, "book": book_run}, repeats)
        except CommandFailed as exc:
            return unavailable(f"nbval failed: {exc}")
        failed = sorted({f for j, _ in junits for f in junit_failures(j)})
        # per-cell times and the split come from one whole run: the one closest to the median
        junit, wall = min(junits, key=lambda jw: abs(jw[1] - stats["book"]["median"]))
        cell_times = junit_cell_times(junit, paths)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    book_ratio = ratio(stats["book"], stats["floor"])
    first = sum(t[0] for t in cell_times.values() if t)
    rest = sum(sum(t[1:]) for t in cell_times.values() if t)
    split = {
        "first_cells_seconds": first,
        "other_cells_seconds": rest,
        "outside_cells_seconds": wall - first - rest,
        "floor_per_notebook_seconds": stats["floor"]["median"] / len(paths),
    }
    return {
        "available": True,
        "reason": None,
        "notebooks": len(paths),
        "wall_seconds": stats["book"],
        "floor_seconds": stats["floor"],
        "figures_floor_seconds": stats["figures"],
        "figures_ratio": ratio(stats["figures"], stats["floor"]),
        "failed_cells": failed,
        "time_split": split,
        "ratio": book_ratio,
        "target_ratio": TARGET_RATIO,
        "meets_target": book_ratio is not None and book_ratio <= TARGET_RATIO,
        "slowest_notebooks": slowest(cell_times, repo, stats["floor"]["median"] / len(paths)),
    }


if __name__ == "__main__":  # pragma: no cover - a quick look by hand
    import json

    t = time.perf_counter()
    print(json.dumps(book_reexecution(repeats=1), indent=2))
    print(f"{time.perf_counter() - t:.1f} s")
