"""Lab speculative_sampling: exact decomposition, edge cases, the seeded Monte Carlo, the wrong fallback."""

import numpy as np
import pytest
from _helpers import assert_matches_source
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import speculative

SOURCE_SPECULATIVE = {
    "target": [0.6, 0.3, 0.1],
    "draft": [0.4, 0.4, 0.2],
    "accept_probability": [1.0, 0.7499999999999999, 0.5],
    "accepted_output_mass": [0.4, 0.3, 0.1],
    "reject_probability": 0.20000000000000007,
    "residual_distribution": [1.0, 0.0, 0.0],
    "exact_output_distribution": [0.6000000000000001, 0.3, 0.1],
    "exact_max_abs_error": 1.1102230246251565e-16,
    "monte_carlo_seed": 73,
    "samples": 200000,
    "observed_distribution": [0.599475, 0.300205, 0.10032],
    "observed_acceptance_rate": 0.801205,
    "max_standard_error_units": 0.47925723781701823,
    "standard_error_bound_units": 6.0,
    "note": "single-prefix acceptance law; not a full multi-token decoder or speed benchmark",
}
# The supplement's wrong_rejection_fallback object opens with the same exact decomposition of the
# same p and q — the same numbers under its own keys — then gives the wrong rule's.
#: its key → the speculative_sampling key holding the same source number
SAME_AS_SPECULATIVE = {
    "target": "target",
    "draft": "draft",
    "accepted_mass": "accepted_output_mass",
    "reject_mass": "reject_probability",
    "correct_residual": "residual_distribution",
    "correct_output": "exact_output_distribution",
}
SOURCE_WRONG_FALLBACK = {
    **{key: SOURCE_SPECULATIVE[same] for key, same in SAME_AS_SPECULATIVE.items()},
    "wrong_output": [0.52, 0.36, 0.12000000000000001],
    "wrong_minus_target": [-0.07999999999999996, 0.06, 0.020000000000000004],
    "wrong_l1_distance": 0.15999999999999998,
    "wrong_total_variation_distance": 0.07999999999999999,
    "scope": "exact single-prefix mass enumeration, not Monte Carlo",
}


def test_speculative_report_matches_source_report():
    assert_matches_source("speculative_sampling", speculative.run(), SOURCE_SPECULATIVE)


def test_wrong_fallback_report_matches_source_report():
    assert_matches_source("wrong_rejection_fallback", speculative.run_wrong_fallback(), SOURCE_WRONG_FALLBACK)


def test_wrong_fallback_tv_is_half_the_l1_and_correct_rule_is_exact():
    report = speculative.run_wrong_fallback()
    assert report["wrong_total_variation_distance"] == report["wrong_l1_distance"] / 2
    assert np.allclose(report["wrong_output"], [0.52, 0.36, 0.12], atol=1e-15, rtol=0)
    assert report["wrong_l1_distance"] == pytest.approx(0.16, abs=1e-15)


def test_monte_carlo_follows_the_documented_draw_order():
    """Drafts from q, then one uniform per step, then residual draws for the rejected: by hand."""
    p, q, n = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.4, 0.2]), 5000
    rng = np.random.default_rng(73)
    drafts = rng.choice(3, size=n, p=q)
    uniforms = rng.random(n)
    alpha = np.minimum(p / q, 1.0)
    keep = uniforms < alpha[drafts]
    by_hand = drafts.copy()
    by_hand[~keep] = rng.choice(3, size=int((~keep).sum()), p=[1.0, 0.0, 0.0])
    drawn = speculative.simulate(p, q, n, seed=73)
    mismatches = int(np.count_nonzero(drawn.tokens != by_hand))
    assert mismatches == 0, f"{mismatches} of {n} tokens differ from the hand-drawn sequence"
    assert np.array_equal(drawn.accepted, keep)


def _distribution(weights):
    w = np.array(weights, dtype=np.float64)
    return w / w.sum()


weights = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.0]), min_size=4, max_size=4).filter(lambda w: sum(w) > 0)


@settings(max_examples=60, deadline=None)
@given(weights, weights)
def test_exact_output_law_equals_target_for_any_draft(pw, qw):
    p, q = _distribution(pw), _distribution(qw)
    mass = speculative.speculative_mass(p, q)
    gap = float(np.max(np.abs(mass.output - p)))
    assert gap < 1e-14, f"output {mass.output} vs target {p} (draft {q}): off by {gap:.3e}"
    assert np.all((mass.accept_probability >= 0) & (mass.accept_probability <= 1))
    assert mass.reject_probability == pytest.approx(0.5 * float(np.abs(p - q).sum()), abs=1e-14)


@pytest.mark.parametrize(
    ("p", "q"),
    [
        ([0.6, 0.3, 0.1], [0.6, 0.3, 0.1]),  # equal: always accept, empty residual
        ([0.0, 0.7, 0.3], [0.3, 0.7, 0.0]),  # each side has a token the other lacks
        ([0.2, 0.8, 0.0], [0.0, 0.0, 1.0]),  # disjoint: every draft rejected
    ],
)
def test_edge_cases_reproduce_the_target(p, q):
    mass = speculative.speculative_mass(p, q)
    assert np.allclose(mass.output, p, atol=1e-14, rtol=0), f"output {mass.output.tolist()} vs p {p}"
    drawn = speculative.simulate(p, q, 20_000, seed=1)
    assert speculative.standard_error_units(drawn.observed, np.array(p), 20_000) < 6.0


def test_equal_draft_and_target_never_reject():
    mass = speculative.speculative_mass([0.6, 0.3, 0.1], [0.6, 0.3, 0.1])
    # β = 1 − (0.6 + 0.3 + 0.1) is only rounding (1.1e-16); α = 1 everywhere, so no draft is refused
    assert mass.reject_probability < 1e-15 and np.array_equal(mass.residual, np.zeros(3))
    assert np.array_equal(mass.accept_probability, np.ones(3))
    assert bool(speculative.simulate([0.6, 0.3, 0.1], [0.6, 0.3, 0.1], 1000).accepted.all())


def test_wrong_fallback_is_caught_by_the_six_sigma_check():
    p, q, n = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.4, 0.2]), 200_000
    wrong = speculative.simulate(p, q, n, seed=73, fallback="target")
    assert np.allclose(wrong.observed, [0.52, 0.36, 0.12], atol=0.005), f"{wrong.observed.tolist()}"
    units = speculative.standard_error_units(wrong.observed, p, n)
    assert units > 6.0, f"the wrong fallback sits only {units:.1f} standard errors from p"
    assert np.allclose(speculative.wrong_fallback_output(p, q), [0.52, 0.36, 0.12], atol=1e-15)


def test_samples_below_ten_thousand_are_refused():
    with pytest.raises(ValueError, match="samples must be at least 10000 .* got 9999"):
        speculative.run(samples=9999)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: speculative.speculative_mass([0.5, 0.5], [0.2, 0.3, 0.5]),
            r"p \(target\) and q \(draft\) must cover the same outcomes, got 2 and 3",
        ),
        (lambda: speculative.speculative_mass([0.5, 0.6], [0.5, 0.5]), r"p \(target\) must sum to 1"),
        (lambda: speculative.simulate([0.5, 0.5], [0.5, 0.5], 10, fallback="p"), "fallback must be one of"),
        (lambda: speculative.simulate([0.5, 0.5], [0.5, 0.5], 0), "samples must be a positive integer, got 0"),
    ],
)
def test_speculative_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_expected_tokens_per_target_call_closed_form_enumeration_and_simulation():
    alphas = np.array([0.0, 0.3, 0.8, 0.95])
    for k in (1, 4, 8):
        closed = (1 - alphas ** (k + 1)) / (1 - alphas)
        np.testing.assert_allclose(speculative.expected_tokens_per_target_call(alphas, k), closed, rtol=1e-12)
        for a in alphas:
            law = speculative.accepted_length_law(float(a), k)
            assert law.sum() == pytest.approx(1.0, abs=1e-12)
            assert (np.arange(1, k + 2) * law).sum() == pytest.approx((1 - a ** (k + 1)) / (1 - a), rel=1e-12)
    assert speculative.expected_tokens_per_target_call(1.0, 4) == pytest.approx(5.0)  # k drafts + bonus
    rng = np.random.default_rng(5)
    accepted = rng.random((200_000, 4)) < 0.8
    tokens = 1 + np.where(accepted.all(axis=1), 4, np.argmin(accepted, axis=1))
    assert tokens.mean() == pytest.approx(3.3616, abs=0.02)


def test_expected_tokens_refuses_bad_alpha_and_k():
    with pytest.raises(ValueError, match="alpha must be an acceptance rate"):
        speculative.expected_tokens_per_target_call(1.2, 3)
    with pytest.raises(ValueError, match="k must be an integer"):
        speculative.expected_tokens_per_target_call(0.5, 2.5)
