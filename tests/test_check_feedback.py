"""How a verdict reads: the first wrong run shows the idea, not the formula; more() and a second
wrong run show the rule and the precise hint; numbers are short; the HTML form is coloured and
wraps at words."""

import numpy as np
import pytest

import labkit.check as check
from labkit.check import feedback
from labkit.check.core import CheckResult, reset_attempts


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()
    yield
    reset_attempts()


def _mean_over_all_rows(logits, targets, valid):
    z = logits - logits.max(axis=-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    p[np.arange(len(targets)), targets] -= 1.0
    return p * valid[:, None] / len(targets)  # divides by N, not by the supervised rows


def test_first_wrong_run_shows_the_concept_and_not_the_formula():
    result = check.masked_ce_gradient(_mean_over_all_rows)
    assert not result.passed and result.level == 1
    text, page = repr(result), result._repr_html_()
    assert result.rule and result.hint == check.exercises()["masked_ce_gradient"].rule  # level 2 holds the rule…
    for shown in (text, page):
        assert result.rule not in shown and result.hint not in shown  # …and neither is shown
        assert "first divergence" in shown and "result.more()" in shown
    assert check.exercises()["masked_ce_gradient"].idea in text


def test_more_shows_the_rule_and_the_precise_hint():
    result = check.masked_ce_gradient(_mean_over_all_rows).more()
    text = repr(result)
    assert result.level == 2 and result.rule in text and result.hint in text
    assert "result.more()" not in text


def test_every_exercise_has_an_idea_that_states_no_formula():
    for name, spec in check.exercises().items():
        assert spec.idea, name
        assert not any(sign in spec.idea for sign in ("=", "√", "σ(", "Σ", "/ ")), f"{name}: {spec.idea}"


@pytest.mark.parametrize(
    "got, shown",
    [
        (0.19999999999999996, "0.2"),
        (0.123456789, "0.123457"),
        (float("-inf"), "-inf"),
        ([0.333333333, 2], "[0.333333, 2]"),
        (np.float32(1.25), "1.25"),
        (np.array([0.1234567, 1.0]), "[0.123457, 1.0]"),
    ],
)
def test_the_readers_value_is_shown_short(got, shown):
    result = CheckResult("x", False, "m", where="w", got=got)
    assert f"your value       : {shown}" in repr(result)


def test_html_form_is_coloured_and_wraps_at_words():
    wrong = CheckResult(
        "rms_norm",
        False,
        "2 of 4 values differ",
        where="case a",
        rule="r",
        got=0.19999999999999996,
        hint="h",
        concept="the idea",
    )
    page = wrong._repr_html_()
    assert f'color:{feedback.FAIL_COLOUR}">✘' in page and "white-space:normal" in page
    assert "word-break:normal" in page and "<code>0.2</code>" in page
    right = CheckResult("rms_norm", True, "matches")._repr_html_()
    assert f'color:{feedback.PASS_COLOUR}">✔' in right and "<table" not in right


def test_html_escapes_what_the_reader_returned():
    result = CheckResult("x", False, "m", where="w", got="<script>")
    assert "<script>" not in result._repr_html_() and "&lt;script&gt;" in result._repr_html_()
