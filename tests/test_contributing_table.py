"""CONTRIBUTING's "where a new X goes" table matches the layout: every file or folder a row names exists
(a path with a placeholder, ``labkit/labs/<lab>.py``, names its folder), and every package of the layout
has its row or its place in the table of packages beside labkit."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(r"^[\w.-]+(/[\w.<>{}*-]+)+/?$")  # a path from the root (a bare ``faults.py`` is the domain's)


def table(text: str, heading: str) -> list[str]:
    """The rows of the Markdown table that follows ``heading``."""
    start = text.rfind("\n", 0, text.index(heading)) + 1  # the heading's line: a sentence or the header row
    rows = []
    for line in text[start:].splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows[2:]  # the header and its rule


def named_paths(rows: list[str]) -> set[str]:
    """Every code span of ``rows`` that is a path: ``a/b.py``, ``a/<x>.py``, ``a/``."""
    spans = {span.split(" ")[0].split("'")[0] for row in rows for span in re.findall(r"`([^`]+)`", row)}
    return {span for span in spans if PATH.match(span) and not span.startswith(("http", "python"))}


def missing(paths: set[str], root: Path = ROOT) -> list[str]:
    gone = []
    for path in sorted(paths):
        fixed = path.split("<")[0].split("{")[0]  # up to the first placeholder
        target = root / fixed if "<" not in path and "{" not in path else (root / fixed).parent
        if "<" in path and fixed.endswith("/"):
            target = root / fixed
        if not target.exists():
            gone.append(path)
    return gone


def test_every_path_of_the_where_a_new_x_goes_table_exists():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = table(text, "Where a new X goes:")
    paths = named_paths(rows)
    for must in ("labkit/reader/players/catalog.py", "labkit/check/__init__.py", "labkit/labs/report.py"):
        assert must in paths, f"the table no longer names {must}"
    assert "labkit/cli/__init__.py" in paths and "booktools/__main__.py" in paths
    assert missing(paths) == [], f"CONTRIBUTING names paths that do not exist: {missing(paths)}"


def test_every_package_beside_labkit_is_in_the_table_of_packages():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = table(text, "| package | what | how it runs |")
    listed = {re.match(r"\| `([\w]+)/`", row).group(1) for row in rows}
    beside = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in ("labkit", "tests")}
    assert listed == beside, f"in the folder, not the table: {beside - listed}; in the table only: {listed - beside}"


def test_the_path_check_finds_a_path_that_is_gone(tmp_path):
    (tmp_path / "labkit" / "labs").mkdir(parents=True)
    (tmp_path / "labkit" / "labs" / "report.py").write_text("")
    rows = ["| lab | `labkit/labs/<lab>.py` and `labkit/labs/report.py`'s `LABS` | `labkit/cli/gone.py` |"]
    assert missing(named_paths(rows), tmp_path) == ["labkit/cli/gone.py"]
