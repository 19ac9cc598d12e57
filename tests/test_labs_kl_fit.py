"""Forward vs reverse KL fits of one Gaussian to a two-mode target, and Schulman's estimators."""

import math

import numpy as np
import pytest

from labkit.labs import kl


def test_forward_fit_covers_both_modes_by_matching_the_targets_moments():
    fit = kl.fit_gaussian("forward")
    mean, std = kl.moments(kl.GRID, kl.bimodal_target())
    assert abs(fit.mean - mean) <= 0.05 and abs(fit.std - std) <= 0.05, f"{fit} vs moments {mean:.3f}, {std:.3f}"
    assert fit.std > 2 * max(s for _, _, s in kl.MODES), "a mass-covering fit is wider than either mode"


def test_reverse_fit_sits_on_the_heavier_mode():
    fit = kl.fit_gaussian("reverse")
    heavy = max(kl.MODES)  # (weight, mean, std) of the heavier mode
    assert (fit.mean, fit.std) == pytest.approx(heavy[1:], abs=0.1), f"{fit} vs mode {heavy}"


def test_each_fit_is_worse_than_the_other_in_the_other_direction():
    forward, reverse = kl.fit_gaussian("forward"), kl.fit_gaussian("reverse")
    assert forward.forward_kl < reverse.forward_kl and reverse.reverse_kl < forward.reverse_kl
    assert reverse.forward_kl > 5 * forward.forward_kl, "missing a mode costs the forward direction dearly"


def test_fit_kls_agree_with_the_labs_discrete_kl():
    fit = kl.fit_gaussian("reverse")
    p, q = kl.bimodal_target(), kl.normal_mass(kl.GRID, fit.mean, fit.std)
    assert fit.forward_kl == pytest.approx(kl.kl_divergence(p, q), rel=1e-9)
    assert fit.reverse_kl == pytest.approx(kl.kl_divergence(q, p), rel=1e-9)


def test_fit_refuses_an_unknown_direction_and_bad_modes():
    with pytest.raises(ValueError, match="direction must be 'forward'"):
        kl.fit_gaussian("sideways")
    with pytest.raises(ValueError, match="mode weights"):
        kl.bimodal_target(modes=((0.5, 0.0, 1.0), (0.6, 1.0, 1.0)))


def test_k1_and_k3_are_unbiased_k2_is_not_and_k3_has_the_smallest_spread():
    model, target = [0.5, 0.5], [0.8, 0.2]  # samples from the model, KL(model ‖ target)
    truth = kl.kl_divergence(model, target)
    moments = kl.estimator_moments(model, target)
    assert moments["k1"][0] == pytest.approx(truth, abs=1e-15)
    assert moments["k3"][0] == pytest.approx(truth, abs=1e-15)
    assert abs(moments["k2"][0] - truth) > 0.01
    assert moments["k3"][1] < moments["k1"][1] / 5, moments


def test_estimators_per_sample_signs_and_values():
    values = kl.kl_estimators(np.log([0.5, 1.0, 2.0]))
    assert values["k1"][2] < 0 <= values["k3"].min() and values["k2"].min() >= 0
    assert values["k3"][0] == pytest.approx(0.5 - 1 + math.log(2), abs=1e-15)
    with pytest.raises(ValueError, match="log_ratio must be finite"):
        kl.kl_estimators([0.0, -np.inf])


def test_the_shared_grid_cannot_be_edited_in_place():
    x = kl.GRID
    with pytest.raises(ValueError, match="read-only"):
        x *= 2.0  # what a reader may try on page 08: it would move every later fit's default
    assert kl.GRID[0] == -8.0 and kl.GRID[-1] == 8.0
