"""The exercise engine on exercises made here (no catalogue entry, no key): a verdict names the place
and the reader's own value, never the expected one; reveal shows it and is recorded; a template left
as it is is "not attempted"; what only the key can judge is "unverified"; values are compared by type."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check import feedback
from labkit.check.core import ANSWER_PARTS, Exercise, without_key
from labkit.check.grading import CheckResult, failure

SECRET = 0.7853981633974483  # π/4: its renderings must never reach a wrong answer's verdict


def _value(**fields) -> Exercise:
    made = {"kind": "derive", "task": "t", "idea": "the idea", "rule": "the rule", "tolerance": 0.01}
    return Exercise("ex", "notebooks/page.md", **{**made, **fields})


def _shown(result: CheckResult) -> str:
    return repr(result) + result._repr_html_() + repr(result.more()) + result.more()._repr_html_()


def _renderings(value: float) -> set[str]:
    return {f"{value:g}", f"{value:.3g}", f"{value:.4f}", f"{value:.2f}", repr(value), feedback.short(value)}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("wrong", [0.8, 0.77, 1, np.float32(0.9), np.array(0.5)])
def test_a_wrong_value_shows_the_readers_value_and_never_the_answer(wrong, lang, monkeypatch):
    monkeypatch.setenv("LABKIT_LANG", lang)
    spec = _value(answer=lambda: SECRET, why="π/4 = {answer:.4f}")
    result = spec(wrong)
    assert not result.passed and result.status == "failed"
    assert not hasattr(result, "expected")
    text = _shown(result)
    assert feedback.short(float(wrong), 6) in text
    assert not any(shown in text for shown in _renderings(SECRET)), text


def test_a_near_miss_just_outside_the_tolerance_fails_and_just_inside_passes():
    spec = _value(answer=lambda: SECRET)
    assert not spec(SECRET + 0.0101).passed and spec(SECRET + 0.0099).passed


def test_reveal_shows_the_answer_and_every_later_verdict_says_it_was_revealed():
    spec = _value(answer=lambda: SECRET, why="π/4 = {answer:.4f}")
    assert not spec(0.5).revealed
    shown = repr(spec.reveal())
    assert "0.7854" in shown and "revealed" in shown
    later = spec(0.5)
    assert later.revealed and "(revealed)" in repr(later) and "(revealed)" in later._repr_html_()
    assert spec(SECRET).revealed


def test_reveal_without_the_key_says_so():
    with pytest.raises(LookupError, match="answer key is not here"):
        _value().reveal()


def test_a_template_left_as_it_is_is_not_attempted_and_not_a_red_failure():
    result = _value(answer=lambda: SECRET)(...)
    assert not result.passed and result.status == "not attempted"
    assert feedback.FAIL_COLOUR not in result._repr_html_() and feedback.OPEN_COLOUR in result._repr_html_()

    def stub(x):
        raise NotImplementedError("your code here")

    function = Exercise("f", "p.md", "extend", "t", "i", signature=("x",), properties=lambda piece: piece(1) and None)
    assert function(stub).status == "not attempted"


def test_without_the_key_a_graded_value_is_unverified_and_a_function_is_judged_by_its_properties():
    assert _value()(0.5).status == "unverified"

    def doubles(piece):
        got = piece(3)
        return None if got == 6 else failure("does not double", where="x = 3", got=got)

    spec = Exercise("f", "p.md", "extend", "t", "i", signature=("x",), properties=doubles)
    assert spec(lambda x: 2 * x).passed
    wrong = spec(lambda x: x + 3.5)
    assert not wrong.passed and wrong.where == "x = 3" and wrong.got == 6.5


@pytest.mark.parametrize(
    ("answer", "candidate", "passes"),
    [
        (1, "1", None),  # a string is not a number
        (1, True, None),  # nor is a bool
        (1, 1.0, True),
        (1, 1.5, False),
        (3, np.int64(3), True),
        (True, np.bool_(True), True),
        (True, 1, None),
        ([-2 / 3, 1 / 3, 1 / 3], np.array([-0.667, 0.333, 0.333]), True),
        ([-2 / 3, 1 / 3, 1 / 3], (-0.667, 0.333, 0.333), True),
        ([-2 / 3, 1 / 3, 1 / 3], [-0.667, 0.333], None),
        ("falls", " Falls ", True),
        ("falls", 0, None),
    ],
)
def test_values_are_compared_by_type_then_value(answer, candidate, passes):
    result = _value(answer=lambda: answer)(candidate)
    if passes is None:  # refused with a message naming what is expected, never a pass
        assert not result.passed and result.status == "failed" and result.level == 1
    else:
        assert result.passed is passes, repr(result)


def test_a_word_answer_can_take_its_other_forms():
    def same_direction(got, expected):
        return None if got.rstrip("s") == expected.rstrip("s") else "another direction"

    spec = _value(answer=lambda: "falls", agree=same_direction)
    assert spec("fall").passed and spec("falls").passed and not spec("rises").passed


def test_points_default_to_one_and_a_prediction_is_a_self_test():
    assert _value().points == 1 and _value().graded
    assert _value(kind="predict").points == 0 and not _value(kind="predict").graded
    with pytest.raises(ValueError, match="points must be a number"):
        _value(points=-1)


def test_second_wrong_run_shows_level_two_and_a_pass_resets_it():
    spec = _value(answer=lambda: SECRET)
    assert spec(0.5).level == 1 and spec(0.5).level == 2
    assert spec(...).status == "not attempted" and spec(0.5).level == 2  # a stub is not an attempt
    assert spec(SECRET).passed and spec(0.5).level == 1


@pytest.mark.parametrize("name", sorted(n for n, s in check.exercises().items() if s.graded))
def test_the_kit_alone_holds_nothing_that_knows_a_graded_answer(name):
    """What knows a graded answer (a value, a reference, hidden cases, reference runs) comes from the
    teacher's key, never from labkit: a class copy, which has no key, cannot yield it."""
    with without_key():
        spec = check.exercises()[name]
        assert not spec.keyed, f"{name}: labkit itself holds {[p for p in ANSWER_PARTS if getattr(spec, p)]}"
