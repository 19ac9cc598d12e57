"""Trace two's fault catalogue: each fault is a changed ``DiffusionConfig``, nothing else (a changed
configuration shows as ``discrete_state`` before a single tensor is computed)."""

from labkit.core import faults as suspects
from labkit.core.faults import Fault, FirstDivergence, catalogue

FAULTS = catalogue(
    Fault(
        "cfg_order_swapped",
        "the CFG batch is built positive-first while the split still reads negative-first, "
        "so guidance pushes away from the prompt",
        {"cfg_order": ("positive", "negative")},
        FirstDivergence("d00", "discrete_state", "cfg_batch_order", suspects.CFG_BATCH_ORDER),
    ),
    Fault(
        "leading_timesteps",
        "the scheduler spaces its 4 steps 'leading' ([750, 500, 250, 0]) instead of 'trailing' "
        "([999, 749, 499, 249]): the loop starts from a less noisy level than the latent has",
        {"timestep_spacing": "leading"},
        FirstDivergence("d01", "discrete_state", "scheduler.timesteps", suspects.TIMESTEP_SPACING),
    ),
    Fault(
        "eta_positive",
        "eta = 1 turns DDIM stochastic: every step but the last draws fresh Gaussian noise, "
        "moving the RNG counter inside the loop",
        {"eta": 1.0},
        FirstDivergence("d01", "discrete_state", "scheduler.eta", suspects.SAMPLER_ETA),
    ),
    Fault(
        "other_seed",
        "seed 314160 instead of 314159: another Philox key, another initial latent",
        {"seed": 314160},
        FirstDivergence("d01", "discrete_state", "seed", suspects.SEED_MAPPING),
    ),
    Fault(
        "counter_offset",
        "the same seed but the stream starts at counter 4096 (as if a previous image had "
        "used the first blocks): another initial latent under an identical configuration",
        {"counter_start": 4096},
        FirstDivergence("d01", "tensors", "tensors.z_999", suspects.PRNG_COUNTER),
    ),
    Fault(
        "vae_scaling_omitted",
        "the decoder forgets to divide by the scaling factor 0.18215: a washed-out image",
        {"vae_scaling": False},
        FirstDivergence("d06", "discrete_state", "latent_scaling.applied", suspects.VAE_SCALING),
    ),
    Fault(
        "png_timestamp",
        "the encoder writes a 'Creation Time' text chunk: identical pixels, other PNG bytes",
        {"png_text": (("Creation Time", "2026-11-29T08:00:00Z"),)},
        FirstDivergence("d07", "tensors", "tensors.png", suspects.PNG_ENCODER),
    ),
)
