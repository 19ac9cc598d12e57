"""The DDIM step: the §7.8 sub-fixture, the schedule, the timesteps and the errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import alphas_cumprod, ddim_step, inference_timesteps
from labkit.diffusion.ddim import ddim_sigma, previous_alpha_bars


def test_ddim_two_d_subfixture_matches_source():
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    a = fx["alpha_bar"]
    z2 = np.array(fx["z_2"])
    z1, x0_2 = ddim_step(z2, np.array(fx["epsilon_2"]), a["2"], a["1"], eta=fx["eta"])
    z0, x0_1 = ddim_step(z1, np.array(fx["epsilon_1"]), a["1"], a["0"], eta=fx["eta"])
    says = fx["source_says"]
    for name, got, key in (
        ("x0_hat_2", x0_2, "x0_hat_2"),
        ("z_1", z1, "z_1"),
        ("x0_hat_1", x0_1, "x0_hat_1"),
        ("z_0", z0, "x0_hat_1"),
    ):
        want = np.array(says[key])
        gap = np.max(np.abs(got - want))
        assert gap <= fx["tolerance"], f"{name}: labkit {got.tolist()} vs source {want.tolist()}, off by {gap:.2e}"
    assert np.array_equal(z0, x0_1), "with alpha_bar_prev = 1 the last step must return x0_hat itself"


def test_schedule_is_scaled_linear_and_decreasing():
    table = alphas_cumprod()
    assert table.shape == (1000,)
    assert np.all(np.diff(table) < 0), "alphas_cumprod must fall with t"
    assert abs(table[0] - (1 - 0.00085)) < 1e-12, f"alpha_bar_0 = {table[0]}"
    assert abs(table[999] - 0.0046601) < 1e-6, f"alpha_bar_999 = {table[999]}"


def test_trailing_and_leading_timesteps():
    assert inference_timesteps(4) == [999, 749, 499, 249]
    assert inference_timesteps(4, "leading") == [750, 500, 250, 0]
    pairs = previous_alpha_bars([999, 749, 499, 249], alphas_cumprod())
    assert pairs[-1][1] == 1.0, "the step after t = 249 must use alpha_bar_prev = 1.0"
    with pytest.raises(ValueError, match="spacing must be one of"):
        inference_timesteps(4, "middle")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"alpha_bar_t": 0.0}, r"alpha_bar_t must be in \(0, 1\], got 0.0"),
        ({"alpha_bar_prev": 1.3}, r"alpha_bar_prev must be in \(0, 1\], got 1.3"),
        ({"epsilon": np.zeros(3)}, r"epsilon must have the sample's shape \[2\], got \[3\]"),
        ({"eta": 0.5}, "needs noise of shape"),
        ({"eta": -1.0}, "eta must be >= 0"),
        ({"eta": 0.5, "noise": np.zeros(5)}, r"noise must have the sample's shape"),
        # the review's case: σ² = 1.17 > 1 − ᾱ_prev = 0.36 used to return a step with σ clamped away
        ({"eta": 2.0, "noise": np.zeros(2)}, r"eta=2.0 gives sigma²=1.17 > 1 − alpha_bar_prev = 0.36"),
    ],
)
def test_ddim_step_errors_name_the_argument(kwargs, message):
    args = {
        "sample": np.array([1.0, -1.0]),
        "epsilon": np.array([0.2, -0.1]),
        "alpha_bar_t": 0.25,
        "alpha_bar_prev": 0.64,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        ddim_step(**args)


@pytest.mark.parametrize(("alpha_bar_t", "alpha_bar_prev"), [(0.25, 0.64), (0.0047, 0.05), (0.5, 0.999999), (0.9, 0.9)])
def test_every_eta_up_to_one_keeps_the_direction_term_real(alpha_bar_t, alpha_bar_prev):
    for eta in np.linspace(0.0, 1.0, 11):
        ddim_step(np.ones(2), np.ones(2), alpha_bar_t, alpha_bar_prev, eta=eta, noise=np.zeros(2))


def test_ddim_step_keeps_shape_and_dtype():
    sample = np.ones((1, 4, 3, 3), dtype=np.float32)
    z_prev, x0 = ddim_step(sample, np.zeros_like(sample), 0.5, 0.9)
    assert z_prev.shape == x0.shape == sample.shape and z_prev.dtype == np.float32


def test_eta_adds_sigma_times_noise():
    z, eps, noise = np.array([1.0, -1.0]), np.array([0.2, -0.1]), np.array([0.5, 0.25])
    sigma = ddim_sigma(0.25, 0.64, 1.0)
    want_sigma = np.sqrt(0.36 / 0.75) * np.sqrt(1 - 0.25 / 0.64)
    assert abs(sigma - want_sigma) < 1e-15, f"sigma {sigma} vs {want_sigma}"
    noisy, x0 = ddim_step(z, eps, 0.25, 0.64, eta=1.0, noise=noise)
    want = 0.8 * x0 + np.sqrt(0.36 - sigma**2) * eps + sigma * noise
    assert np.allclose(noisy, want, atol=1e-15), f"{noisy.tolist()} vs {want.tolist()}"


@settings(max_examples=30, deadline=None)
@given(a_t=st.floats(0.01, 0.99), a_prev=st.floats(0.01, 1.0), seed=st.integers(0, 2**16))
def test_true_noise_recovers_x0_exactly(a_t, a_prev, seed):
    rng = np.random.default_rng(seed)
    x0, eps = rng.standard_normal(6), rng.standard_normal(6)
    z_t = np.sqrt(a_t) * x0 + np.sqrt(1 - a_t) * eps
    z_prev, x0_hat = ddim_step(z_t, eps, a_t, a_prev)
    want_prev = np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * eps
    assert np.allclose(x0_hat, x0, atol=1e-9), f"x0_hat off by {np.max(np.abs(x0_hat - x0)):.2e}"
    assert np.allclose(z_prev, want_prev, atol=1e-9), f"z_prev off by {np.max(np.abs(z_prev - want_prev)):.2e}"
