"""Every exercise with the teacher's key: its worked solution passes, a value just outside its tolerance
fails, no wrong answer's verdict states the answer, and a broken candidate gets a clear message."""

import ast
import copy
import importlib.util
import inspect
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check
from labkit.check import feedback

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"


def load_solutions() -> dict:
    """Every solution by name — a function, or a value for a predict/derive exercise ({} in a class
    copy, where solutions/ is absent)."""
    found = {}
    for path in sorted(SOLUTIONS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"solutions_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, answer in vars(module).items():
            own = getattr(answer, "__module__", module.__name__) == module.__name__
            if name.startswith("_") or name.isupper() or inspect.ismodule(answer) or not own:
                continue
            assert name not in found, f"solution {name} appears twice"
            found[name] = answer
    return found


SOLVED = load_solutions()
EXERCISES = check.exercises()


def test_every_exercise_has_exactly_one_solution():
    assert sorted(EXERCISES) == sorted(SOLVED), "exercises and solutions differ"


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_solution_passes(name):
    result = EXERCISES[name](SOLVED[name])
    assert result.passed, repr(result)


@pytest.mark.parametrize("name", sorted(n for n, s in EXERCISES.items() if not s.is_value))
def test_stub_and_crash_get_clear_messages(name):
    spec = EXERCISES[name]
    params = ", ".join(spec.signature)
    namespace = {}
    exec(f"def stub({params}):\n    raise NotImplementedError('write it here')\n", namespace)
    exec(f"def crash({params}):\n    return [][1]\n", namespace)
    stub = spec(namespace["stub"])
    assert not stub.passed and stub.status == "not attempted" and "not yet implemented" in stub.message
    crash = spec(namespace["crash"])
    assert not crash.passed and "raised IndexError" in crash.message
    wrong_signature = spec(lambda *, nothing=None: None)
    assert not wrong_signature.passed and "your function takes" in wrong_signature.message


def test_unknown_exercise_is_named():
    with pytest.raises(AttributeError, match="no exercise 'nope'"):
        check.nope  # noqa: B018


def test_nan_output_is_reported():
    from labkit.check.grading import CandidateProblem, as_array

    with pytest.raises(CandidateProblem, match=r"contains NaN \(first at index \[1\]\)"):
        as_array(np.array([1.0, np.nan]), "the mask")


# --- deliberately wrong answers: each caught at its place ------------------------------------


def test_an_exercise_without_a_catalogue_entry_is_refused_by_name():
    from labkit.check.core import value

    def not_in_the_catalogue():
        return 1.0

    with pytest.raises(ValueError, match="'not_in_the_catalogue' has no entry in exercises.toml"):
        value(not_in_the_catalogue)


def test_every_chapter_page_has_a_registered_exercise():
    from booktools import book

    exempt = {
        "notebooks/glossary.md",  # a reference page, not a chapter
    }
    pages = {f.replace(".ipynb", ".md") for f in book.toc_files(book.load_config())}
    covered = {spec.page for spec in EXERCISES.values()}
    missing = sorted(pages - covered - exempt)
    assert not missing, f"pages without a labkit.check exercise: {missing}"
    assert covered <= pages, f"exercises point at pages outside the toc: {sorted(covered - pages)}"


# --- the book's exercises as a whole ------------------------------------------------------------

VALUES = sorted(n for n, s in EXERCISES.items() if s.is_value)


def test_every_page_has_a_predict_or_diagnose_exercise_and_a_third_extend_or_derive():
    pages = {s.page for s in EXERCISES.values()}
    graded = {s.page for s in EXERCISES.values() if s.kind in ("predict", "diagnose")}
    assert pages == graded, f"pages without a predict or diagnose exercise: {sorted(pages - graded)}"
    making = [n for n, s in EXERCISES.items() if s.kind in ("extend", "derive")]
    assert 3 * len(making) >= len(EXERCISES), f"{len(making)} of {len(EXERCISES)} are extend or derive"


@pytest.mark.parametrize("name", VALUES)
def test_a_prediction_just_outside_its_tolerance_fails(name):
    spec, answer = EXERCISES[name], SOLVED[name]
    expected = spec(answer)  # the right value passes (also in test_solution_passes)
    assert expected.passed, repr(expected)
    wrong = _off(answer, spec)
    result = spec(wrong)
    assert not result.passed and result.status == "failed", (wrong, repr(result))
    assert spec(lambda: answer).passed is False  # a function is not a prediction


def _off(answer, spec):
    """A wrong answer next to ``answer``: just past the stated tolerance, the other verdict, another ID."""
    import re

    if isinstance(answer, bool):
        return not answer
    if isinstance(answer, str):
        ids = re.fullmatch(r"([a-z]+)(\d+)", answer)
        if ids:
            return f"{ids[1]}{int(ids[2]) + 1:0{len(ids[2])}d}"
        return {"rises": "falls", "falls": "rises", "conditional": "unconditional"}.get(answer, "conditional")
    if isinstance(answer, tuple | list):
        return [_off(answer[0], spec), *answer[1:]]
    tolerance = re.search(r"±\s*([\d.]+)\s*(%?)", spec.task)
    step = 1.0 if tolerance is None else float(tolerance[1]) * (abs(answer) / 100 if tolerance[2] else 1)
    return answer + 1.5 * step


@pytest.mark.parametrize("name", sorted(n for n, s in EXERCISES.items() if not s.is_value))
def test_no_second_level_hint_contains_the_reference_code(name):
    """The rule names where an answer breaks, never the answer: no line of a hidden reference's
    code (its docstring, which states the task and the hints, left out) appears in the second-level hint."""
    spec = EXERCISES[name]
    for reference in (spec.reference, spec.hook, spec.agree):
        if inspect.isfunction(reference) and reference.__module__.startswith("labkit.check"):
            source = textwrap.dedent(inspect.getsource(reference))
            definition = ast.parse(source).body[0]
            after_docstring = definition.body[1 if ast.get_docstring(definition) else 0].lineno - 1
            code = [line.strip() for line in source.splitlines()[after_docstring:]]
            for line in code:
                if len(line) > 12 and not line.startswith("#"):
                    assert line not in spec.rule, f"{name}: the rule shows {line!r}"


def test_labkit_check_lists_each_exercise_with_its_kind(capsys):
    from labkit.cli import main

    assert main(["check"]) == 0
    listed = dict(re.findall(r"^(\w+)\([^)]*\)  (\w+)  \[", capsys.readouterr().out, flags=re.M))
    assert listed == {name: spec.kind for name, spec in EXERCISES.items()}


def _renderings(answer) -> set[str]:
    """The ways a verdict could print ``answer``."""
    if isinstance(answer, list | tuple):
        return set().union(*(_renderings(a) for a in answer)) if answer else set()
    if isinstance(answer, bool | str):
        return {str(answer)} if len(str(answer)) > 2 else set()
    number = float(answer)
    return {f"{number:g}", f"{number:.3g}", f"{number:.4f}", feedback.short(number), feedback.short(number, 6)} - {
        "0",
        "1",
        "0.0",
        "1.0",
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", VALUES)
def test_no_hint_of_a_value_exercise_states_its_answer(name, lang, monkeypatch):
    monkeypatch.setenv("LABKIT_LANG", lang)
    spec = EXERCISES[name]
    for text in _renderings(spec.answer()):
        assert text not in spec.text("rule") and text not in spec.text("idea"), f"{name}: a hint states {text}"


def _another(answer):
    """A third value, neither the answer nor ``_off``'s wrong one (None for a bool: there is no third)."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, str):
        return "another-word"
    if isinstance(answer, tuple | list):
        return [_another(answer[0]), *answer[1:]]
    return answer - 7 if isinstance(answer, int) else answer - 3.7 * max(abs(answer), 1.0)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", [n for n in VALUES if not isinstance(SOLVED.get(n), bool)])
def test_a_wrong_values_verdict_does_not_depend_on_the_answer(name, lang, monkeypatch):
    monkeypatch.setenv("LABKIT_LANG", lang)
    """The same wrong value judged against the real answer and against another: the verdicts read the
    same, so none of them can state the answer (a verdict never carries it until it is revealed)."""
    spec, wrong = EXERCISES[name], _off(SOLVED[name], EXERCISES[name])
    twin = copy.copy(spec)
    twin.answer = lambda: _another(spec.answer())
    verdicts = [(repr(e(wrong)), e(wrong)._repr_html_(), repr(e(wrong).more())) for e in (spec, twin)]
    assert not spec(wrong).passed and verdicts[0] == verdicts[1], f"{name}: the verdict depends on the answer"
    assert not hasattr(spec(wrong), "expected")
