"""Every exercise: its solution passes, typical wrong answers are caught with a useful hint,
and broken candidates get a clear message instead of a traceback."""

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"


def load_solutions() -> dict:
    """Every solution function by name ({} in a class copy, where solutions/ is absent)."""
    found = {}
    for path in sorted(SOLUTIONS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"solutions_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and not name.startswith("_"):
                assert name not in found, f"solution {name} appears twice"
                found[name] = fn
    return found


SOLVED = load_solutions()
EXERCISES = check.exercises()


def test_every_exercise_has_exactly_one_solution(answer_key):
    assert sorted(EXERCISES) == sorted(SOLVED), "exercises and solutions differ"


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_solution_passes(name, answer_key):
    result = EXERCISES[name](SOLVED[name])
    assert result.passed, repr(result)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_stub_and_crash_get_clear_messages(name):
    spec = EXERCISES[name]
    params = ", ".join(spec.signature)
    namespace = {}
    exec(f"def stub({params}):\n    raise NotImplementedError('write it here')\n", namespace)
    exec(f"def crash({params}):\n    return [][1]\n", namespace)
    stub = spec(namespace["stub"])
    assert not stub.passed and "not yet implemented" in stub.message
    crash = spec(namespace["crash"])
    assert not crash.passed and "raised IndexError" in crash.message
    wrong_signature = spec(lambda *, nothing=None: None)
    assert not wrong_signature.passed and "your function takes" in wrong_signature.message


def test_unknown_exercise_is_named():
    with pytest.raises(AttributeError, match="no exercise 'nope'"):
        check.nope  # noqa: B018


def test_nan_output_is_reported():
    from labkit.check.core import CandidateProblem, as_array

    with pytest.raises(CandidateProblem, match=r"contains NaN \(first at index \[1\]\)"):
        as_array(np.array([1.0, np.nan]), "the mask")


# --- deliberately wrong answers: each caught, with the expected hint ------------------------


def test_bad_parents_that_ignores_forward_parents_is_caught():
    result = check.bad_parents(lambda events: [e["event_id"] for e in events[1:] if e["parent_event_id"] is None])
    assert not result.passed and "points forward" in result.where and "seen before" in result.hint


def test_rms_norm_with_eps_outside_the_root_is_caught():
    result = check.rms_norm(lambda x, eps: x / (np.sqrt(np.mean(x * x, axis=-1, keepdims=True)) + eps))
    assert not result.passed and "inside the square root" in result.hint and result.got != result.expected


def test_rms_norm_over_the_wrong_axis_is_caught():
    result = check.rms_norm(lambda x, eps: x / np.sqrt(np.mean(x * x, axis=0, keepdims=True) + eps))
    assert not result.passed and "last axis" in result.hint


def test_rms_norm_that_promotes_float32_is_caught():
    result = check.rms_norm(lambda x, eps: x.astype(np.float64) / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))
    assert not result.passed and result.rule == "dtype"


def test_every_chapter_page_has_a_registered_exercise():
    from labkit.devtools import book

    exempt = {"notebooks/glossary.md"}  # a reference page, not a chapter
    pages = {f.replace(".ipynb", ".md") for f in book.toc_files(book.load_config())}
    covered = {spec.page for spec in EXERCISES.values()}
    missing = sorted(pages - covered - exempt)
    assert not missing, f"pages without a labkit.check exercise: {missing}"
    assert covered <= pages, f"exercises point at pages outside the toc: {sorted(covered - pages)}"
