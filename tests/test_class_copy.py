"""A class copy: the book without its answer key, whose own tests skip the answer-key tests cleanly.

The full ``make test`` of a copy takes minutes (a fresh .venv and every page); here the copy is
written to a temporary folder and its own test collection runs the tests that need the answer
key — they must skip with the message, not fail — plus the CLI checks of the copy.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from classroom import classcopy

# Slow tier: out of `make test-fast`, in `make test` (see CONTRIBUTING, test tiers).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
ANSWER_KEY_MISSING = "answer_key/ (the answer key) is not in this copy"  # tests/conftest.py says it


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
        "tests/test_check_engine.py",
    ):
        assert (copy / kept).is_file(), f"{kept} is missing from the class copy"
    assert not (copy / ".venv").exists() and not (copy / ".git").exists()


def test_class_copy_runs_its_own_labkit(copy):
    done = _in_copy(copy, "-c", "import labkit; print(labkit.__file__)")
    assert done.stdout.strip().startswith(str(copy)), done.stdout + done.stderr


def test_the_copys_own_check_tests_pass_without_the_key(copy):
    done = _in_copy(
        copy, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "tests/test_check_engine.py"
    )
    tail = done.stdout[-3000:]
    assert done.returncode == 0 and " failed" not in tail, tail


def test_a_student_checks_an_answer_file_in_the_copy(copy, tmp_path):
    """``labkit check NAME --file`` runs the answer with the copy's own ``classroom/runner.py``: a wrong answer
    gets its verdict (1), not "comes with the book's clone" (2)."""
    answer = tmp_path / "my_answer.py"
    answer.write_text(
        "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    return min(cap_ms, base_ms * 2**attempt)\n"
    )
    done = _in_copy(copy, "-m", "labkit", "check", "jittered_backoff", "--file", str(answer))
    assert done.returncode == 1 and done.stdout.startswith("✘ jittered_backoff"), done.stdout + done.stderr


IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
import labkit, labkit.check as check
found = []
for package in ("labkit", "classroom", "benchmarks"):
    try:
        root = importlib.import_module(package)
    except ImportError:
        continue
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if "__main__" not in info.name:
            try:
                importlib.import_module(info.name)
            except Exception:
                pass
for path in sorted(__import__("pathlib").Path("tests").glob("test_*.py")):
    try:
        importlib.import_module("tests." + path.stem)
    except Exception:
        pass
try:
    import answer_key
    found.append("answer_key imports")
except ImportError:
    pass
keyed = [n for n, s in check.exercises().items() if s.graded and s.keyed]
print(json.dumps({"keyed": keyed, "found": found}))
"""


def test_nothing_importable_in_a_class_copy_knows_a_graded_answer(copy):
    done = _in_copy(copy, "-c", IMPORT_EVERYTHING)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"keyed": [], "found": []}


def _bodies(path: Path) -> dict[str, str]:
    """Each function of ``path`` by its body's syntax tree (names of the function itself left out)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return {}
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return {ast.dump(ast.Module(body=f.body[1:] if ast.get_docstring(f) else f.body)): f.name for f in functions}


def test_no_file_of_a_class_copy_holds_a_worked_solution(copy):
    if not (REPO / "answer_key").is_dir():
        pytest.skip(ANSWER_KEY_MISSING)
    solutions = {}
    for path in [*(REPO / "answer_key").glob("*.py"), *(REPO / "answer_key" / "solutions").glob("*.py")]:
        solutions.update({body: f"{path.relative_to(REPO)}:{name}" for body, name in _bodies(path).items()})
    assert len(solutions) > 40
    found = [
        f"{path.relative_to(copy)}:{name} is {solutions[body]}"
        for path in copy.rglob("*.py")
        for body, name in _bodies(path).items()
        if body in solutions
    ]
    assert not found, found[:10]
