"""Lab kl: the source's numbers, asymmetry, zero, infinity, and invalid distributions."""

import math

import numpy as np
import pytest
from _helpers import assert_matches_source
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import kl

SOURCE_KL = {
    "p": [0.8, 0.2],
    "q": [0.5, 0.5],
    "forward_kl_nat": 0.19274475702175753,
    "reverse_kl_nat": 0.22314355131420976,
    "identical_kl_nat": 0.0,
    "zero_reference_support": "positive p on zero q gives infinity",
}


def test_kl_report_matches_source_report():
    assert_matches_source("kl", kl.run(), SOURCE_KL)


def test_forward_and_reverse_match_their_closed_forms():
    forward = kl.kl_divergence([0.8, 0.2], [0.5, 0.5])
    reverse = kl.kl_divergence([0.5, 0.5], [0.8, 0.2])
    closed_forward = 0.8 * math.log(1.6) + 0.2 * math.log(0.4)
    closed_reverse = -0.5 * math.log(0.64)  # 0.5·log(0.5/0.8) + 0.5·log(0.5/0.2) = −½·log 0.64
    assert forward == pytest.approx(closed_forward, abs=1e-15), f"{forward!r} vs {closed_forward!r}"
    assert reverse == pytest.approx(closed_reverse, abs=1e-15), f"{reverse!r} vs {closed_reverse!r}"
    assert abs(forward - reverse) > 0.03


def test_mass_where_the_reference_has_none_is_infinite_but_not_the_other_way():
    assert math.isinf(kl.kl_divergence([0.5, 0.5], [1.0, 0.0]))
    finite = kl.kl_divergence([1.0, 0.0], [0.5, 0.5])  # zero-mass terms of p contribute 0
    assert finite == pytest.approx(math.log(2.0), abs=1e-15), f"{finite!r} vs log 2"


def _normalise(values):
    v = np.array(values) + 1e-3
    return v / v.sum()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=3, max_size=3), st.lists(st.floats(0, 1), min_size=3, max_size=3))
def test_kl_is_non_negative_and_zero_on_itself(a, b):
    p, q = _normalise(a), _normalise(b)
    value = kl.kl_divergence(p, q)
    assert value >= -1e-15, f"KL(p‖q) = {value!r} < 0 for p = {p}, q = {q}"
    assert kl.kl_divergence(p, p) == 0.0


@pytest.mark.parametrize(
    ("p", "q", "message"),
    [
        ([0.5, 0.6], [0.5, 0.5], r"p must sum to 1, got \[0.5, 0.6\] summing to 1.1"),
        ([1.2, -0.2], [0.5, 0.5], "p must hold finite probabilities ≥ 0"),
        ([0.5, 0.5], [0.3, 0.3, 0.4], "p and q must cover the same outcomes, got 2 and 3"),
        ([0.5, 0.5], [[0.5, 0.5]], "q must be a 1-D probability vector"),
        ([0.5, 0.5], [np.nan, 1.0], "q must hold finite probabilities"),
    ],
)
def test_invalid_distribution_is_refused_with_a_clear_error(p, q, message):
    with pytest.raises(ValueError, match=message):
        kl.kl_divergence(p, q)
