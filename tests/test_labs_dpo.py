"""Lab dpo: the source's numbers, analytic gradient vs finite differences, what the loss sees."""

import numpy as np
import pytest
from _helpers import report_differences
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import dpo
from labkit.labs.common import finite_difference

# The source chapter's `dpo` report object (reference values, compared exactly).
SOURCE_DPO = {
    "policy_log_probs": [-2.0, -3.0],
    "reference_log_probs": [-2.5, -2.5],
    "beta": 0.2,
    "margin": 0.2,
    "loss_nat": 0.5981388693815918,
    "analytic_gradient": [-0.09003320053750444, 0.09003320053750444],
    "max_abs_gradient_error": 1.847813568822687e-12,
    "loss_after_gradient_step": 0.5965192788398588,
    "both_probabilities_lower_counterexample_loss": 0.5130152523999526,
}

log_prob = st.floats(min_value=-30.0, max_value=-0.01, allow_nan=False)


def test_dpo_report_matches_source_report():
    differences = report_differences(dpo.run(), SOURCE_DPO)
    assert not differences, "labkit's dpo object vs the source's:\n" + "\n".join(differences)


@settings(max_examples=40, deadline=None)
@given(st.tuples(log_prob, log_prob), st.tuples(log_prob, log_prob), st.floats(min_value=0.01, max_value=2.0))
def test_dpo_analytic_gradient_equals_finite_difference(policy, reference, beta):
    analytic = dpo.dpo_gradient(policy, reference, beta)
    numeric = finite_difference(lambda x: dpo.dpo_loss(x, reference, beta), np.array(policy))
    gap = float(np.max(np.abs(analytic - numeric)))
    assert gap < 1e-7, f"analytic {analytic} vs finite difference {numeric}: off by {gap:.3e}"
    assert analytic[0] == -analytic[1], "the two components must be opposite: L sees only the margin"


def test_dpo_loss_sees_only_the_difference_of_log_ratios():
    base = dpo.dpo_loss([-2.0, -3.0], [-2.5, -2.5])
    shifted = dpo.dpo_loss([-7.0, -8.0], [-2.5, -2.5])  # both answers 5 nats less probable
    assert shifted == pytest.approx(base, abs=1e-15), f"{shifted!r} vs {base!r}"


def test_dpo_loss_at_zero_margin_is_log_two():
    loss = dpo.dpo_loss([-2.5, -2.5], [-2.5, -2.5])
    assert loss == pytest.approx(np.log(2.0), abs=1e-15), f"loss {loss!r} vs log 2 = {np.log(2.0)!r}"


def test_dpo_counterexample_both_answers_less_probable_yet_loss_falls():
    report = dpo.run()
    shifted = np.array(report["policy_log_probs"]) + np.array(dpo.BOTH_LOWER_SHIFT)
    assert np.all(shifted < np.array(report["policy_log_probs"]))
    assert report["both_probabilities_lower_counterexample_loss"] < report["loss_nat"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"policy": [-2.0, -3.0, -1.0]}, "policy must be [2]"),
        ({"policy": [-2.0, 0.5]}, "policy must be finite log-probabilities"),
        ({"reference": [np.nan, -1.0]}, "reference must be finite"),
        ({"beta": 0.0}, "beta must be a positive finite number, got 0.0"),
        ({"step_size": -0.1}, "step_size must be a positive"),
        ({"shift": [1.0, -2.0]}, "shift must be [2] negative"),
    ],
)
def test_dpo_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        dpo.run(**kwargs)
