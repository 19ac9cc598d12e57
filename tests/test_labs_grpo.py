"""Lab grpo: group advantages (ddof 0 vs 1), permutation equivariance, PPO clipping."""

import numpy as np
import pytest
from _helpers import report_differences
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.labs import grpo

SOURCE_GRPO = {
    "rewards": [[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]],
    "population_std": [0.5, 0.0, 0.0],
    "population_advantage": [
        [-0.9999999800000003, -0.9999999800000003, 0.9999999800000003, 0.9999999800000003],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ],
    "sample_advantage": [
        [-0.8660253887844389, -0.8660253887844389, 0.8660253887844389, 0.8660253887844389],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ],
    "epsilon": 1e-08,
    "ppo_clip_objectives": [2.4, -3.0, 1.0, -1.6],
    "note": "advantages are frozen numeric values; this is not an actor training loop",
}

rewards_groups = st.lists(st.floats(min_value=-5, max_value=5, allow_nan=False), min_size=2, max_size=6)


def test_grpo_report_matches_source_report():
    differences = report_differences(grpo.run(), SOURCE_GRPO)
    assert not differences, "labkit's grpo object vs the source's:\n" + "\n".join(differences)


def test_population_and_sample_std_give_the_closed_form_advantages():
    rewards = [[0.0, 0.0, 1.0, 1.0]]
    population = grpo.group_advantages(rewards, ddof=0)[0]
    sample = grpo.group_advantages(rewards, ddof=1)[0]
    # population std of {0,0,1,1} is 1/2, sample std is √(1/3): Â = ±(1/2)/(std + ε)
    expected_population = 0.5 / (0.5 + 1e-8)
    expected_sample = 0.5 / (np.sqrt(1 / 3) + 1e-8)
    assert population[3] == pytest.approx(expected_population, rel=1e-15), (
        f"{population[3]!r} vs {expected_population!r}"
    )
    assert sample[3] == pytest.approx(expected_sample, rel=1e-15), f"{sample[3]!r} vs {expected_sample!r}"
    assert np.array_equal(np.sign(population), [-1, -1, 1, 1])


def test_a_larger_epsilon_shrinks_advantages_toward_zero():
    small = grpo.group_advantages([[0.0, 1.0, 1.0, 0.0]], eps=1e-8)[0, 1]
    large = grpo.group_advantages([[0.0, 1.0, 1.0, 0.0]], eps=1e-4)[0, 1]
    assert 0 < large < small, f"eps 1e-4 gives {large!r}, eps 1e-8 gives {small!r}"


@settings(max_examples=40, deadline=None)
@given(rewards_groups, st.randoms(use_true_random=False))
def test_reordered_answers_get_reordered_advantages(rewards, random):
    order = list(range(len(rewards)))
    random.shuffle(order)
    r = np.array([rewards])
    for ddof in (0, 1):
        reordered = grpo.group_advantages(r[:, order], ddof=ddof)
        expected = grpo.group_advantages(r, ddof=ddof)[:, order]
        gap = float(np.max(np.abs(reordered - expected)))
        assert gap <= 1e-6 * max(1.0, float(np.max(np.abs(expected)))), f"ddof {ddof}: off by {gap:.3e}"


def test_equal_rewards_give_zero_advantage_and_eps_zero_is_refused():
    assert np.array_equal(grpo.group_advantages([[0.75, 0.75, 0.75]]), np.zeros((1, 3)))
    # 0.7 is not a binary fraction: the mean is off by ~1e-16 and ε = 1e-8 magnifies it
    rounded = grpo.group_advantages([[0.7, 0.7, 0.7]])
    assert 0 < float(np.max(np.abs(rounded))) < 1e-7, f"{rounded.tolist()}"
    assert grpo.run(rewards=[[0.7, 0.7, 0.7, 0.7]])["population_std"][0] < 1e-15
    with pytest.raises(ValueError, match="eps > 0"):
        grpo.group_advantages([[0.75, 0.75, 0.75]], eps=0.0)


@pytest.mark.parametrize(
    ("ratio", "advantage", "expected"),
    [
        (1.5, 2.0, 1.2 * 2.0),  # Â > 0, ratio above 1 + ε: capped, no incentive to push further
        (1.5, -2.0, 1.5 * -2.0),  # Â < 0, ratio above: unclipped term is the smaller (pessimistic)
        (0.5, 2.0, 0.5 * 2.0),  # Â > 0, ratio below: unclipped, keeps the full penalty
        (0.5, -2.0, 0.8 * -2.0),  # Â < 0, ratio below 1 − ε: floored
        (1.1, 3.0, 1.1 * 3.0),  # inside the band: plain ρ·Â
    ],
)
def test_ppo_clip_objective_case_by_case(ratio, advantage, expected):
    got = float(grpo.ppo_clip_objective([ratio], [advantage], 0.2)[0])
    assert got == pytest.approx(expected, abs=1e-15), f"ρ={ratio}, Â={advantage}: {got!r} vs {expected!r}"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: grpo.group_advantages([1.0, 2.0]), r"rewards must be \[G, K\]"),
        (lambda: grpo.group_advantages([[1.0, 2.0]], ddof=2), "ddof must be 0"),
        (lambda: grpo.group_advantages([[1.0]], ddof=1), "needs K ≥ 2"),
        (lambda: grpo.ppo_clip_objective([1.0, 2.0], [1.0]), "ratio and advantage must have one shape"),
        (lambda: grpo.ppo_clip_objective([-1.0], [1.0]), "ratio must hold positive"),
        (lambda: grpo.ppo_clip_objective([1.0], [1.0], clip=1.5), r"clip must be in \(0, 1\), got 1.5"),
        (lambda: grpo.run(permutation=[0, 0, 1, 2]), "permutation must reorder 0..3"),
    ],
)
def test_grpo_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_clip_is_flat_below_one_minus_eps_and_unbounded_above_for_negative_advantage():
    ratios = np.array([0.1, 0.5, 0.79, 1.0, 1.3, 5.0, 50.0])
    objective = grpo.ppo_clip_objective(ratios, -np.ones_like(ratios), 0.2)
    np.testing.assert_allclose(objective[:3], [-0.8, -0.8, -0.8])  # flat: no pull further down
    np.testing.assert_allclose(objective[3:], -ratios[3:])  # keeps falling with ρ
    assert grpo.clip_gradient(ratios, -np.ones_like(ratios), 0.2)[:3].tolist() == [0.0, 0.0, 0.0]


def test_dual_clip_floors_only_the_negative_advantage_side():
    ratios = np.array([0.5, 1.0, 2.0, 5.0, 50.0])
    negative = grpo.dual_clip_objective(ratios, -np.ones(5), 0.2, dual=3.0)
    np.testing.assert_allclose(negative, [-0.8, -1.0, -2.0, -3.0, -3.0])
    positive = grpo.dual_clip_objective(ratios, np.ones(5), 0.2, dual=3.0)
    np.testing.assert_allclose(positive, grpo.ppo_clip_objective(ratios, np.ones(5), 0.2))
    with pytest.raises(ValueError, match="dual must be > 1"):
        grpo.dual_clip_objective(ratios, np.ones(5), 0.2, dual=1.0)
