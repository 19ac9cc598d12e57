"""``labkit check``: lists every exercise of the book with its kind and checks a solution
file from the command line, concept-level hint first."""

import re

import pytest

import labkit.check as check
from labkit.check.core import reset_attempts
from labkit.cli import main

WRONG_BACKOFF = """def jittered_backoff(attempt, base_ms, cap_ms, u):
    return min(cap_ms, u * base_ms * 2**attempt)
"""
RIGHT_BACKOFF = """def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2**attempt)
"""


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()


def test_check_lists_every_exercise_page_13_included(capsys):
    assert main(["check"]) == 0
    names = re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M)
    assert len(names) == len(check.exercises()) and "growth_exponent" in names


def test_check_page_filters_the_list(capsys):
    assert main(["check", "--page", "13-measuring"]) == 0
    assert re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M) == ["doubling_factor", "growth_exponent"]


def test_check_file_passes_a_right_answer(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(RIGHT_BACKOFF)
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 0
    assert capsys.readouterr().out.startswith("✔ jittered_backoff")


def test_check_file_shows_the_concept_first_and_the_hint_with_more(tmp_path, capsys):
    answer = tmp_path / "answer.py"
    answer.write_text(WRONG_BACKOFF)
    assert main(["check", "jittered_backoff", "--file", str(answer)]) == 1
    first = capsys.readouterr().out
    assert first.startswith("✘ jittered_backoff") and check.exercises()["jittered_backoff"].idea in first
    assert "the cap bounds the exponential" not in first and "--more" in first
    assert main(["check", "jittered_backoff", "--file", str(answer), "--more"]) == 1
    assert "the cap bounds the exponential" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "nope", "--file", "x.py"], "no exercise 'nope'"),
        (["check", "jittered_backoff", "--file", "/nonexistent/answer.py"], "--file must be an existing Python file"),
        (["check", "--file", "x.py"], "name the exercise"),
    ],
)
def test_check_refuses_bad_arguments_by_name(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_check_file_without_the_function_names_what_it_defines(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def my_norm(attempt, base_ms, cap_ms, u):\n    return x\n")
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 2
    assert "defines no function 'jittered_backoff' (it defines: my_norm" in capsys.readouterr().err
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py"), "--function", "my_norm"]) == 1


def test_check_file_that_does_not_parse_says_where(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def jittered_backoff(attempt, base_ms, cap_ms, u):\n    return (x\n")
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 2
    assert "answer.py does not parse" in capsys.readouterr().err
