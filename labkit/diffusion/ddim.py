"""The DDIM scheduler of ``ddim-v1``: the training noise schedule, the timesteps, one step.

Training schedule (``scaled-linear``, 1000 steps, the one latent-diffusion models use):

    βᵢ = (√β_start + i/999 · (√β_end − √β_start))²,  β_start = 0.00085, β_end = 0.012
    ᾱ_t = ∏_{i ≤ t} (1 − βᵢ)                      (alphas_cumprod, t = 0 … 999)

Inference timesteps for N steps over T = 1000 training steps:

    trailing:  t_k = round(T − k·T/N) − 1      → [999, 749, 499, 249] for N = 4
    leading:   t_k = (N − 1 − k) · (T / N)     → [750, 500, 250, 0]

The step after the last timestep uses ᾱ_prev = 1.0 (``final_alpha_bar``): the loop ends on
a clean sample.
"""

import numpy as np

from labkit.core.guards import is_integer, real_array, real_number

NUM_TRAIN_TIMESTEPS = 1000
BETA_START = 0.00085
BETA_END = 0.012
FINAL_ALPHA_BAR = 1.0
#: the smallest ᾱ a step accepts: the schedule's is 0.0047, and below 1e-12 x̂₀ = (…)/√ᾱ_t
#: multiplies the latents' rounding error by more than a million (1e-300 gives inf).
MIN_ALPHA_BAR = 1e-12
SPACINGS = ("trailing", "leading")


def alphas_cumprod() -> np.ndarray:
    """ᾱ_t for t = 0 … T−1 of the scaled-linear schedule, float64 [T]."""
    betas = np.linspace(np.sqrt(BETA_START), np.sqrt(BETA_END), NUM_TRAIN_TIMESTEPS, dtype=np.float64) ** 2
    return np.cumprod(1.0 - betas)


def inference_timesteps(num_inference_steps: int, spacing: str = "trailing") -> list[int]:
    """The timesteps a sampler visits, noisiest first; ``spacing`` is 'trailing' or 'leading'."""
    n, total = num_inference_steps, NUM_TRAIN_TIMESTEPS
    if not is_integer(n) or not 1 <= n <= total:
        raise ValueError(f"num_inference_steps must be an integer in [1, {total}], got {n!r}")
    if spacing == "trailing":
        steps = np.round(total - np.arange(n) * (total / n)) - 1
    elif spacing == "leading":
        steps = np.arange(n)[::-1] * (total // n)
    else:
        raise ValueError(f"spacing must be one of {SPACINGS}, got {spacing!r}")
    return [int(t) for t in steps]


def previous_alpha_bars(timesteps: list[int], table: np.ndarray) -> list[tuple[float, float]]:
    """(ᾱ_t, ᾱ_prev) for each visited timestep; the last one's ᾱ_prev is 1.0."""
    if outside := [t for t in timesteps if not 0 <= t < len(table)]:
        raise ValueError(f"timestep {outside[0]} is outside the schedule's [0, {len(table) - 1}]")
    alpha_bars = [float(table[t]) for t in timesteps]
    return list(zip(alpha_bars, [*alpha_bars[1:], FINAL_ALPHA_BAR], strict=True))


def ddim_sigma(alpha_bar_t: float, alpha_bar_prev: float, eta: float) -> float:
    """σ_t = η · √((1 − ᾱ_prev)/(1 − ᾱ_t)) · √(1 − ᾱ_t/ᾱ_prev)   (0 when η = 0 or ᾱ_t = 1)."""
    if eta == 0.0 or alpha_bar_t == 1.0:
        return 0.0
    return float(
        eta * np.sqrt((1.0 - alpha_bar_prev) / (1.0 - alpha_bar_t)) * np.sqrt(1.0 - alpha_bar_t / alpha_bar_prev)
    )


def ddim_step(sample, epsilon, alpha_bar_t, alpha_bar_prev, eta=0.0, noise=None):
    """One DDIM update with epsilon prediction; any shape, the sample's dtype.

    sample z_t, epsilon ε, noise: one shape [...]. Returns (z_prev [...], x̂₀ [...]).

        x̂₀     = (z_t − √(1 − ᾱ_t) · ε) / √ᾱ_t                       (§7.8)
        z_prev = √ᾱ_prev · x̂₀ + √(1 − ᾱ_prev − σ²) · ε  + σ · noise
    with σ from ``ddim_sigma``; η = 0 gives σ = 0 and no noise is used.  ``noise`` is
    required whenever σ > 0 (η > 0 and ᾱ_prev < 1); with ᾱ_prev = 1 the step is exact.
    The arithmetic is float64; results are cast back to ``sample``'s dtype.
    """
    z_t, eps = _sample_and_epsilon(sample, epsilon)  # float64 [...]
    a_t, a_prev, eta = _step_numbers(alpha_bar_t, alpha_bar_prev, eta)
    sigma = ddim_sigma(a_t, a_prev, eta)
    noise = _step_noise(noise, sigma, eta, z_t.shape)  # None when η = 0
    x0_hat = (z_t - np.sqrt(1.0 - a_t) * eps) / np.sqrt(a_t)  # (z_t − √(1−ᾱ_t)·ε) / √ᾱ_t
    direction = np.sqrt(max(1.0 - a_prev - sigma**2, 0.0)) * eps  # √(1 − ᾱ_prev − σ²) · ε
    z_prev = np.sqrt(a_prev) * x0_hat + direction  # √ᾱ_prev · x̂₀ + direction
    if noise is not None:
        z_prev = z_prev + sigma * noise  #   + σ · noise
    dtype = np.asarray(sample).dtype
    return z_prev.astype(dtype), x0_hat.astype(dtype)


# -- the step's argument checks -----------------------------------------------------------------


def _sample_and_epsilon(sample, epsilon) -> tuple[np.ndarray, np.ndarray]:
    """z_t and ε as float64 arrays of one shape: finite real floats (a complex ε would lose
    its imaginary part, a NaN latent would spread to every value)."""
    sample_arr, epsilon_arr = real_array("sample", sample), real_array("epsilon", epsilon)
    if epsilon_arr.shape != sample_arr.shape:
        raise ValueError(
            f"epsilon must have the sample's shape {list(sample_arr.shape)}, got {list(epsilon_arr.shape)}"
        )
    return sample_arr.astype(np.float64), epsilon_arr.astype(np.float64)


def _check_alpha(name: str, value) -> float:
    """A real number in (0, 1], and not below MIN_ALPHA_BAR: not a string, not a bool, not NaN."""
    value = real_number(name, value, 0.0, 1.0, open_low=True, expected="in (0, 1]")
    return real_number(name, value, MIN_ALPHA_BAR)  # 1e-300 is in (0, 1] but no usable ᾱ


def _step_numbers(alpha_bar_t, alpha_bar_prev, eta) -> tuple[float, float, float]:
    """(ᾱ_t, ᾱ_prev, η) as floats: ᾱ in (0, 1], η >= 0, and with η > 0 a step removes noise and
    σ² ≤ 1 − ᾱ_prev (the direction term's √(1 − ᾱ_prev − σ²) must be real: η ≤ 1 always is)."""
    a_t = _check_alpha("alpha_bar_t", alpha_bar_t)
    a_prev = _check_alpha("alpha_bar_prev", alpha_bar_prev)
    eta = real_number("eta", eta, 0.0)
    if eta > 0.0 and a_prev < a_t:
        raise ValueError(
            f"with eta > 0, alpha_bar_prev must be >= alpha_bar_t (a step removes noise), "
            f"got alpha_bar_prev={a_prev} < alpha_bar_t={a_t}"
        )
    sigma = ddim_sigma(a_t, a_prev, eta)
    if sigma**2 > (1.0 - a_prev) * (1.0 + 1e-12):
        largest = eta * np.sqrt(1.0 - a_prev) / sigma
        raise ValueError(
            f"eta={eta} gives sigma²={sigma**2:.6g} > 1 − alpha_bar_prev = {1.0 - a_prev:.6g}: the step would need "
            f"the square root of a negative number; eta must be at most {largest:.6g} here (0 ≤ eta ≤ 1 always works)"
        )
    return a_t, a_prev, eta


def _step_noise(noise, sigma: float, eta: float, shape: tuple[int, ...]) -> np.ndarray | None:
    """The noise as float64 of the sample's shape when η > 0 (required when σ > 0), else None."""
    if sigma > 0.0 and noise is None:
        raise ValueError(
            f"eta={eta} > 0 gives sigma={sigma:.6g} and needs noise of shape {list(shape)}; got noise=None"
        )
    if noise is None or eta == 0.0:
        return None
    noise_arr = real_array("noise", noise)
    if noise_arr.shape != shape:
        raise ValueError(f"noise must have the sample's shape {list(shape)}, got {list(noise_arr.shape)}")
    return noise_arr.astype(np.float64)
