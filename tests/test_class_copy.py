"""A class copy: the book without solutions/, whose own tests skip the answer-key tests cleanly.

The full ``make test`` of a copy takes minutes (a fresh .venv and every page); here the copy is
written to a temporary folder and its own test collection runs the tests that need the answer
key — they must skip with the message, not fail — plus the CLI checks of the copy.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.cli import classcopy

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
        [sys.executable, "-m", "labkit", "class-copy", str(dest)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (dest.parent / "class-copy.log").write_text(done.stdout)
    return dest


def _in_copy(copy, *argv):
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy's labkit, not this one's
    return subprocess.run([sys.executable, *argv], cwd=copy, env=env, capture_output=True, text=True, check=False)


def test_class_copy_leaves_out_the_answer_key_and_keeps_the_book(copy):
    assert not (copy / "solutions").exists()
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


def test_class_copy_leaves_out_every_test_file_that_holds_a_passing_answer(copy):
    """The command tried every function of the book's tests (nested ones, and those in strings of
    code) against every checker and left out each file that held a passing one.  The copy's tests
    are the book's, byte for byte, less exactly those files, so none of them holds a passing answer
    (scanning the copy again would repeat the same scan over the same bytes)."""
    said = (copy.parent / "class-copy.log").read_text()
    left_out = set(re.findall(r"^left out (\S+): its \w+ passes the exercise \w+$", said, flags=re.M))
    assert left_out and not any((copy / path).exists() for path in left_out), said
    book = {p.as_posix() for p in classcopy.book_files(REPO) if p.parts[0] == "tests" and p.suffix == ".py"}
    kept = {p.relative_to(copy).as_posix() for p in (copy / "tests").rglob("*.py") if "__pycache__" not in p.parts}
    assert kept == book - left_out, (sorted(book - left_out - kept), sorted(kept - book))
    assert all((copy / path).read_bytes() == (REPO / path).read_bytes() for path in kept)
    for kept in ("tests/test_cli_check.py", "tests/test_class_copy.py"):  # hostile answers, none passing
        assert (copy / kept).is_file(), said


EXERCISE = "jittered_backoff"  # an extend exercise whose answer is a few lines of arithmetic


def _right_answer() -> str:
    """The answer key's jittered_backoff, as a file of its own (this test file holds no passing answer)."""
    import ast

    key = REPO / "solutions" / "variants.py"
    if not key.is_file():
        pytest.skip(ANSWER_KEY_MISSING)
    text = key.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == EXERCISE)
    return ast.get_source_segment(text, node) + "\n"


def test_the_answer_finder_finds_answers_in_functions_nested_functions_and_strings(tmp_path):
    right = _right_answer()
    nested = "\n".join("    " + line for line in right.split(f"def {EXERCISE}", 1)[1].splitlines())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_planted.py").write_text(
        f"import numpy as np\n\nANSWER = {right!r}\n\n\ndef test_x():\n    def inner{nested.strip()}\n"
    )
    found = classcopy.answers_in_tests(tmp_path)
    assert sorted(found) == [
        (Path("tests/test_planted.py"), "inner", EXERCISE),
        (Path("tests/test_planted.py"), EXERCISE, EXERCISE),
    ]


def test_the_answer_finder_writes_nothing_where_it_runs(tmp_path, monkeypatch):
    """A test helper that opens a store on whatever it is handed must not leave files in the
    teacher's folder: the scan runs in a scratch folder."""
    (tmp_path / "book" / "tests").mkdir(parents=True)
    (tmp_path / "book" / "tests" / "test_helper.py").write_text(
        "def keep(x):\n    open(str(x)[:40].replace('/', '_'), 'w').write('left behind')\n    return x\n"
    )
    monkeypatch.chdir(tmp_path)
    assert classcopy.answers_in_tests(tmp_path / "book") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book"]


HANDINS = {  # ada hands in the answer key's jittered_backoff; ben forgets the cap
    "ben.py": "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    return u * base_ms * 2**attempt\n",
    "cal/answer.py": "import os\nimport labkit.check.core as core\ncore.CheckResult.passed = True\n"
    "try:\n    open({target!r}, 'w').write('graded?')\nexcept OSError:\n    pass\n\n"
    "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    os._exit(0)\n",
}


def test_a_teacher_grades_three_hand_ins_from_the_class_copy(copy, tmp_path):
    import csv

    target = tmp_path / "teacher" / "grades-overwritten.txt"
    target.parent.mkdir()
    for name, text in {"ada.py": _right_answer(), **HANDINS}.items():
        (tmp_path / "handins" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "handins" / name).write_text(text.replace("{target!r}", repr(str(target))))
    out = tmp_path / "grades.csv"
    done = _in_copy(copy, "-m", "labkit", "grade", str(tmp_path / "handins"), "--out", str(out), "--timeout", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(r["student"], r["exercise"]): r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert {k: r["status"] for k, r in rows.items()} == {
        ("ada", EXERCISE): "passed",
        ("ben", EXERCISE): "failed",
        ("cal", EXERCISE): "could not check",
    }
    assert "exit status 0" in rows["cal", EXERCISE]["message"]
    assert not target.exists()
    as_json = tmp_path / "grades.json"
    done = _in_copy(
        copy, "-m", "labkit", "grade", str(tmp_path / "handins"), "--out", str(as_json), "--exercise", EXERCISE
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["status"] for r in json.loads(as_json.read_text())] == ["passed", "failed", "could not check"]


def test_grade_finds_what_a_hand_in_binds_without_running_it(tmp_path):
    from labkit.cli.grade import defined_names

    (tmp_path / "a.py").write_text(
        "import os\nos._exit(1)\nx, (y, z) = 1, (2, 3)\nif True:\n    def f():\n        w = 0\n"
    )
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert defined_names(tmp_path / "a.py") == {"os", "x", "y", "z", "f"}
    assert defined_names(tmp_path / "broken.py") == set()


def test_grade_refuses_bad_arguments_by_name(tmp_path, capsys):
    from labkit.cli import main

    assert main(["grade", str(tmp_path / "nowhere")]) == 2
    assert "FOLDER" in capsys.readouterr().err
    assert main(["grade", str(tmp_path), "--exercise", "nope"]) == 2
    assert "--exercise" in capsys.readouterr().err
    assert main(["grade", str(tmp_path)]) == 2
    assert "no hand-in" in capsys.readouterr().err
