"""``labkit check``: lists every exercise of the book (27, page 13's too) and checks a solution
file from the command line, concept-level hint first."""

import re

import pytest

from labkit.check.concepts import CONCEPTS
from labkit.check.core import reset_attempts
from labkit.cli import main

WRONG_RMS_NORM = """import numpy as np

def rms_norm(x, eps):
    return x / (np.sqrt(np.mean(x * x, axis=-1, keepdims=True)) + eps)
"""
RIGHT_RMS_NORM = """import numpy as np

def rms_norm(x, eps):
    return x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + x.dtype.type(eps))
"""


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()


def test_check_lists_every_exercise_page_13_included(capsys):
    assert main(["check"]) == 0
    names = re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M)
    assert len(names) == 27 and "growth_exponent" in names


def test_check_page_filters_the_list(capsys):
    assert main(["check", "--page", "13-measuring"]) == 0
    assert re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M) == ["growth_exponent"]


def test_check_file_passes_a_right_answer(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(RIGHT_RMS_NORM)
    assert main(["check", "rms_norm", "--file", str(tmp_path / "answer.py")]) == 0
    assert capsys.readouterr().out.startswith("✔ rms_norm")


def test_check_file_shows_the_concept_first_and_the_hint_with_more(tmp_path, capsys):
    answer = tmp_path / "answer.py"
    answer.write_text(WRONG_RMS_NORM)
    assert main(["check", "rms_norm", "--file", str(answer)]) == 1
    first = capsys.readouterr().out
    assert first.startswith("✘ rms_norm") and CONCEPTS["rms_norm"] in first
    assert "inside the square root" not in first and "--more" in first
    assert main(["check", "rms_norm", "--file", str(answer), "--more"]) == 1
    assert "inside the square root" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "nope", "--file", "x.py"], "no exercise 'nope'"),
        (["check", "rms_norm", "--file", "/nonexistent/answer.py"], "--file must be an existing Python file"),
        (["check", "--file", "x.py"], "name the exercise"),
    ],
)
def test_check_refuses_bad_arguments_by_name(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_check_file_without_the_function_names_what_it_defines(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def my_norm(x, eps):\n    return x\n")
    assert main(["check", "rms_norm", "--file", str(tmp_path / "answer.py")]) == 2
    assert "defines no function 'rms_norm' (it defines: my_norm" in capsys.readouterr().err
    assert main(["check", "rms_norm", "--file", str(tmp_path / "answer.py"), "--function", "my_norm"]) == 1


def test_check_file_that_does_not_parse_says_where(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def rms_norm(x, eps):\n    return (x\n")
    assert main(["check", "rms_norm", "--file", str(tmp_path / "answer.py")]) == 2
    assert "answer.py does not parse" in capsys.readouterr().err
