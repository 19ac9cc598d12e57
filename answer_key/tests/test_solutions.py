"""Every exercise: its solution passes, typical wrong answers are caught at their place, a prediction
just outside its tolerance fails, and broken candidates get a clear message instead of a traceback."""

import ast
import importlib.util
import inspect
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check

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
    assert not stub.passed and "not yet implemented" in stub.message
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


def test_name_the_fault_that_always_names_one_fault_is_caught_at_the_first_other_mystery():
    result = check.name_the_fault(lambda kind, golden, mystery: "broken_detokenizer")
    assert not result.passed and result.where.startswith("case “mystery 1 (diffusion)”"), repr(result)
    assert (result.got, result.expected) == ("broken_detokenizer", "leading_timesteps") and result.hint


def test_name_the_fault_that_names_the_first_fault_of_the_kind_is_caught():
    from labkit.trace import catalogue

    result = check.name_the_fault(lambda kind, golden, mystery: next(iter(catalogue.faults(kind))))
    assert not result.passed and result.where.startswith("case “mystery"), repr(result)


def test_an_exercise_without_a_catalogue_entry_is_refused_by_name():
    from labkit.check.core import value

    def not_in_the_catalogue():
        return 1.0

    with pytest.raises(ValueError, match="'not_in_the_catalogue' has no entry in exercises.toml"):
        value(not_in_the_catalogue)


def test_every_chapter_page_has_a_registered_exercise():
    from labkit.devtools import book

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
    assert not result.passed and result.where == "your value", (wrong, repr(result))
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


def test_hint_state_lives_on_each_exercise():
    kl, jitter = EXERCISES["kl_from_logits"], EXERCISES["jittered_backoff"]
    kl.wrong_runs = jitter.wrong_runs = 0
    assert kl(lambda z_p, z_q: 0.5).level == 1 and kl(lambda z_p, z_q: 0.5).level == 2
    assert jitter(lambda a, b, c, u: 0.0).level == 1  # counted per exercise
    assert not kl(lambda z_p, z_q: (_ for _ in ()).throw(NotImplementedError())).passed
    assert kl(lambda z_p, z_q: 0.5).level == 2  # a stub is not an attempt


@pytest.mark.parametrize(
    ("name", "wrong", "where"),
    [
        ("jittered_backoff", lambda a, b, c, u: min(c, u * b * 2**a), "past the cap"),
        ("jittered_backoff", lambda a, b, c, u: u * min(c, b * 2 ** (a + 1)), "first retry"),
        ("sliding_window_mask", lambda ids, w: np.tril(np.ones((len(ids), len(ids)), bool), 0), "two documents"),
        (
            "sliding_window_mask",
            lambda ids, w: (
                (ids[:, None] == ids[None, :])
                & np.tri(len(ids), k=0, dtype=bool)
                & ~np.tri(len(ids), k=-w - 1, dtype=bool)
            ),
            "two documents",
        ),
        ("rloo_advantages", lambda r: r - r.mean(axis=-1, keepdims=True), "the lab's three groups"),
        ("fixed_log_softmax", __import__("labkit.check.labs", fromlist=["x"]).faulty_log_softmax, "the lab's row"),
        ("fixed_log_softmax", lambda z: z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True)), "in the thousands"),
        ("kl_from_logits", lambda zp, zq: float(np.sum(np.exp(zp) / np.exp(zp).sum() * (zp - zq))), "seeded logits"),
    ],
)
def test_a_realistic_wrong_variant_fails_at_its_case(name, wrong, where):
    result = EXERCISES[name](wrong)
    assert not result.passed and where in (result.where or "") + result.message, repr(result)


def test_an_error_in_the_readers_code_points_at_the_readers_line():
    namespace = {}
    exec(compile("import numpy as np\n\ndef bad(z_p, z_q):\n    return np.log(z_p)[10]\n", "<cell>", "exec"), namespace)
    result = EXERCISES["kl_from_logits"](namespace["bad"])
    assert not result.passed and "line 4 of your cell" in result.message, result.message


def test_labkit_check_lists_each_exercise_with_its_kind(capsys):
    from labkit.cli import main

    assert main(["check"]) == 0
    listed = dict(re.findall(r"^(\w+)\([^)]*\)  (\w+)  \[", capsys.readouterr().out, flags=re.M))
    assert listed == {name: spec.kind for name, spec in EXERCISES.items()}


@pytest.mark.parametrize("name", VALUES)
def test_no_hint_of_a_value_exercise_states_its_answer(name):
    spec = EXERCISES[name]
    expected = spec(_off(SOLVED[name], spec)).expected  # a wrong answer's verdict carries the run's value
    assert expected is not None
    answers = expected if isinstance(expected, list | tuple) else [expected]
    for answer in answers:
        if isinstance(answer, float | int) and not isinstance(answer, bool):
            for text in {f"{answer:g}", f"{answer:.3g}", f"{answer:.4f}"}:
                assert text not in spec.rule and text not in spec.idea, f"{name}: a hint states {text}"
        elif isinstance(answer, str):
            assert answer not in spec.rule and answer not in spec.idea, f"{name}: a hint states {answer!r}"
