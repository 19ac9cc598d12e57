"""A class copy: the book without its answer key, whose own tests skip the answer-key tests cleanly.

The full ``make test`` of a copy takes minutes (a fresh .venv and every page); here the copy is
written to a temporary folder and its own test collection runs the tests that need the answer
key — they must skip with the message, not fail — plus the CLI checks of the copy.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from classroom import classcopy

# Slow tier: out of `make test-fast`, in `make test` (see CONTRIBUTING, test tiers).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
ANSWER_KEY_MISSING = "solutions/ (the answer key) is not in this copy"  # tests/conftest.py says it

SOLUTION_TESTS = [
    "tests/test_check.py::test_every_exercise_has_exactly_one_solution",
    "tests/test_check.py::test_solution_passes",
    "tests/test_check_labs_i.py::test_attention_pass_message_reproduces_the_hand_example",
    "tests/test_check_labs_ii.py::test_report_problems_that_do_not_name_the_key_are_caught",
]


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    dest = tmp_path_factory.mktemp("class") / "class-copy"
    done = subprocess.run(
        [sys.executable, "-m", "classroom", "copy", str(dest)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (dest.parent / "class-copy.log").write_text(done.stdout)
    return dest


def _in_copy(copy, *argv):
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy's labkit, not this one's
    return subprocess.run([sys.executable, *argv], cwd=copy, env=env, capture_output=True, text=True, check=False)


def test_class_copy_leaves_out_the_answer_key_and_keeps_the_book(copy):
    assert not (copy / "solutions").exists() and not (copy / "answer_key").exists()
    assert not any(p.parts[0] in ("answer_key", "solutions") for p in classcopy.book_files(REPO))
    for kept in (
        "Makefile",
        "pyproject.toml",
        "myst.yml",
        "labkit/check/core.py",
        "notebooks/00-preface.md",
        "notebooks/00-preface.ipynb",
        "tests/test_check.py",
    ):
        assert (copy / kept).is_file(), f"{kept} is missing from the class copy"
    assert not (copy / ".venv").exists() and not (copy / ".git").exists()


def test_class_copy_runs_its_own_labkit(copy):
    done = _in_copy(copy, "-c", "import labkit; print(labkit.__file__)")
    assert done.stdout.strip().startswith(str(copy)), done.stdout + done.stderr


def test_solution_tests_skip_with_a_message_and_the_others_run_in_a_class_copy(copy):
    done = _in_copy(
        copy,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:xdist",
        "-p",
        "no:cacheprovider",
        *SOLUTION_TESTS,
        "tests/test_check.py::test_bad_parents_that_ignores_forward_parents_is_caught",
        "tests/test_check.py::test_stub_and_crash_get_clear_messages[jittered_backoff]",
    )
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    assert " failed" not in tail and "2 passed" in tail, tail  # the two that need no key ran
    assert ANSWER_KEY_MISSING in tail, tail
    skipped = int(tail.rsplit(" skipped", 1)[0].rsplit(" ", 1)[-1])
    assert skipped == len(SOLUTION_TESTS) - 1 + len(check_exercises()), tail


def check_exercises():
    import labkit.check

    return labkit.check.exercises()


def test_class_copy_refuses_a_folder_that_holds_files(tmp_path):
    (tmp_path / "x.txt").write_text("mine")
    with pytest.raises(ValueError, match="DEST must be a new or empty folder"):
        classcopy.class_copy(REPO, tmp_path)


def test_class_copy_refuses_a_folder_inside_the_book(tmp_path):
    with pytest.raises(ValueError, match="DEST must lie outside the book's repository"):
        classcopy.class_copy(REPO, REPO / "build" / "class-copy-inside")


def test_make_lint_does_not_name_the_answer_key_when_it_is_absent(tmp_path):
    import shutil as sh

    if sh.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "pyproject.toml", "jupyter/overrides.json"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        sh.copyfile(REPO / name, tmp_path / name)

    def lint_commands() -> str:
        done = subprocess.run(["make", "-n", "lint"], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return "\n".join(line for line in done.stdout.splitlines() if "ruff" in line)

    assert "ruff check" in lint_commands() and "solutions" not in lint_commands()
    (tmp_path / "solutions").mkdir()
    assert "solutions" in lint_commands(), "with the answer key present, make lint checks it"
