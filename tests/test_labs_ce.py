"""Cross-entropy lab: loss ln 4, gradient softmax − onehot, finite differences agree, clear errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import masks
from labkit.labs.common import finite_difference, log_softmax, masked_cross_entropy
from labkit.nn.attention import softmax
from labkit.reader.tables import versus_source

SOURCE_LOSS = 1.3862943611198906  # ln 4
SOURCE_GRADIENT = [[0.5, 0.25, -0.75]]


def test_ce_gradient_report_matches_source_figures():
    report = masks.run_ce_gradient()
    assert set(report) == {
        "loss_nat",
        "gradient",
        "finite_difference_step",
        "max_abs_gradient_error",
        "abs_tolerance",
        "relative_tolerance",
    }
    assert report["loss_nat"] == pytest.approx(SOURCE_LOSS, rel=1e-15), (
        f"loss {report['loss_nat']!r} differs from the source's ln 4 = {SOURCE_LOSS!r} "
        f"by {abs(report['loss_nat'] - SOURCE_LOSS):.3g}"
    )
    gap = np.max(np.abs(np.array(report["gradient"]) - SOURCE_GRADIENT))
    assert gap <= 1e-14, f"gradient {report['gradient']} is {gap:.3g} from the source's {SOURCE_GRADIENT}"
    assert (report["finite_difference_step"], report["abs_tolerance"], report["relative_tolerance"]) == (
        1e-5,
        1e-9,
        1e-8,
    )
    # Central differences carry truncation and rounding error: small but not zero.
    assert 0.0 < report["max_abs_gradient_error"] < 1e-9, (
        f"finite-difference error {report['max_abs_gradient_error']:.3g}"
    )


def test_loss_of_uniform_logits_is_log_vocabulary():
    loss, _ = masked_cross_entropy(np.zeros((2, 5)), np.array([0, 4]), np.array([True, True]))
    assert loss == pytest.approx(math.log(5), rel=1e-15), f"uniform loss {loss!r} vs ln 5 = {math.log(5)!r}"


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), vocab=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_analytic_gradient_equals_finite_difference(rows, vocab, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(rows, vocab))
    targets = rng.integers(0, vocab, size=rows)
    valid = rng.random(rows) < 0.7
    valid[rng.integers(rows)] = True
    loss, analytic = masked_cross_entropy(logits, targets, valid)
    numeric = finite_difference(lambda z: masked_cross_entropy(z, targets, valid)[0], logits)
    gap = np.max(np.abs(analytic - numeric))
    assert np.allclose(analytic, numeric, atol=1e-8, rtol=1e-6), (
        f"analytic vs finite-difference gradient differ by {gap:.3g}"
    )
    assert np.all(analytic[~valid] == 0.0), "unsupervised rows must get exactly zero gradient"
    sums = analytic.sum(axis=1)
    assert np.allclose(sums, 0.0, atol=1e-15), f"each gradient row of softmax − onehot sums to 0, got {sums}"


def test_log_softmax_equals_log_of_softmax_and_survives_huge_logits():
    z = np.array([[1000.0, 0.0, -1000.0], [0.3, -0.2, 0.1]])
    lp = log_softmax(z)
    assert np.all(np.isfinite(lp)), f"log_softmax overflowed: {lp}"
    assert np.allclose(np.exp(lp), softmax(z), atol=1e-15), "exp(log_softmax) vs softmax"
    assert lp[0, 0] == 0.0, f"the dominant logit has log-probability {lp[0, 0]!r}, expected 0.0"


def test_finite_difference_of_a_quadratic_is_exact_to_rounding():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    slopes = finite_difference(lambda v: float(np.sum(v**2)), x)
    assert np.allclose(slopes, 2 * x, atol=1e-8), f"d/dx Σx² = 2x, off by {np.max(np.abs(slopes - 2 * x)):.3g}"
    assert finite_difference(lambda v: float(np.sum(v**2)), x).shape == x.shape


def test_no_supervised_target_is_a_clear_error():
    with pytest.raises(ValueError, match="valid marks no supervised target"):
        masked_cross_entropy(np.zeros((2, 3)), np.array([0, 1]), np.array([False, False]))


@pytest.mark.parametrize(
    ("logits", "targets", "valid", "message"),
    [
        (np.zeros(3), np.array([0]), np.array([True]), r"logits must be \[N, V\]"),
        (np.zeros((2, 3)), np.array([0]), np.array([True, True]), r"targets must be \[N\] = \[2\]"),
        (np.zeros((2, 3)), np.array([0.0, 1.0]), np.array([True, True]), "targets must be"),
        (np.zeros((2, 3)), np.array([0, 3]), np.array([True, True]), r"targets must lie in \[0, 3\), got 3"),
        (np.zeros((2, 3)), np.array([0, 1]), np.array([1, 1]), r"valid must be \[N\] = \[2\] booleans"),
    ],
)
def test_bad_input_names_the_argument(logits, targets, valid, message):
    with pytest.raises(ValueError, match=message):
        masked_cross_entropy(logits, targets, valid)


def test_finite_difference_rejects_a_non_positive_step():
    with pytest.raises(ValueError, match="step must be a positive float, got 0"):
        finite_difference(lambda v: 0.0, np.zeros(2), step=0)


def test_equal_infinities_agree_without_a_warning():
    """KL(p ‖ q) = inf on both sides agrees (inf − inf is NaN, so it is judged by equality),
    an infinity against a finite number does not, and no RuntimeWarning reaches the page."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = versus_source(
            [
                ("kl", float("inf"), float("inf"), 0.0),
                ("off", float("inf"), 1.0, 0.0),
                ("off too", 1.0, float("inf"), 0.0),
            ]
        )
    assert [row[-1] for row in table.rows] == ["within 1e-12 rel.", "DIFFERENT", "DIFFERENT"]


def test_versus_source_says_exact_within_or_different():
    table = versus_source(
        [
            ("same", 1.5, 1.5, 0.0),
            ("close", 4.4e-16, 2.2e-16, 1e-12),
            ("far", 0.25, 0.5, 1e-12),
            ("lists", [[0.5, 0.25]], [[0.5, 0.25]], 0.0),
            ("text", "a", "b", 1.0),
            ("ints", [1, 2], [1, 2], 0.0),
            ("last bit", 0.2477276305125953, 0.2477276305125954, 0.0),
            ("residual off", 4.4e-16, 3e-3, 1e-12),
        ],
        title="t",
    )
    verdicts = [row[-1] for row in table.rows]
    assert verdicts == [
        "within 1e-12 rel.",
        "within 1e-12",
        "DIFFERENT",
        "within 1e-12 rel.",
        "DIFFERENT",
        "exact",
        "within 1e-12 rel.",
        "DIFFERENT",
    ], verdicts
    assert table.headers == ["quantity", "source's script, run", "labkit computes", "agree"]
    # A discrepancy measure: the script's print format beside the verdict against the tolerance.
    assert table.rows[1][1:3] == ["4.400e-16", "≤ 1e-12 ✓"]
    assert table.rows[7][1:3] == ["4.400e-16", "3.0e-03 > 1e-12 ✗"]
    # Other floats at the policy's 6 significant digits: one ulp apart shows the same text.
    assert table.rows[6][1] == table.rows[6][2] == "0.247728"
