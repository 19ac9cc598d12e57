"""The class tools on the Chinese edition: a class copy carries both editions (a class reads either:
`make lab LAB_ARGS=--edition zh`), a zh page's kernel in the copy finds the copy itself, and the
grading finds the same exercises in a zh page as in its English page: the code cells that call
``check.<exercise>(…)`` are the same cells."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

from booklab.edits import book_pages
from booktools import edition
from classroom import classcopy

REPO = Path(__file__).resolve().parents[1]
CALL = re.compile(r"\bcheck\.([a-z_][a-z0-9_]*)\(")


def called_exercises(page: Path) -> list[str]:
    """The exercises a page's code cells check, in order (what a reader answers and a grader grades)."""
    code = [c.source for c in jupytext.read(page).cells if c.cell_type == "code"]
    return [name for source in code for name in CALL.findall(source) if name not in ("reveal", "exercises")]


@pytest.mark.parametrize("page", [p.relative_to(REPO / "zh").as_posix() for p in book_pages(REPO / "zh")])
def test_a_chinese_page_checks_the_same_exercises_as_its_english_page(page):
    import labkit.check as check

    zh = called_exercises(REPO / "zh" / page)
    assert zh == called_exercises(REPO / page)
    assert set(zh) <= set(check.exercises()), "a zh page calls an exercise the grader does not know"


def test_every_exercise_of_the_english_pages_is_called_by_some_page():
    found = {name for page in book_pages(REPO) for name in called_exercises(page)}
    assert found and "rms_norm_row" in found  # the finder sees the pages' check calls


@pytest.mark.slow
def test_a_class_copy_carries_both_editions_and_a_zh_kernel_finds_the_copy(tmp_path):
    dest = tmp_path / "class-copy"
    done = subprocess.run(
        [sys.executable, "-m", "classroom", "copy", str(dest)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    for kept in (
        "zh/myst.yml",
        "zh/.labkit-edition",
        *(p.relative_to(REPO).as_posix() for p in book_pages(REPO / "zh")),
    ):
        assert (dest / kept).is_file(), f"{kept} is missing from the class copy"
    assert edition.editions(dest) == ["zh"]
    assert not (dest / "answer_key").exists()
    assert not any(p.parts[0] == "answer_key" for p in classcopy.book_files(REPO))
    folder = dest / "zh" / "notebooks" / "11-labs"
    folder.mkdir(parents=True, exist_ok=True)
    code = "from labkit.core.fixtures import book_root; print(book_root())"
    env = {"PYTHONPATH": str(dest), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True)
    assert run.stdout.strip() == str(dest), run.stderr
