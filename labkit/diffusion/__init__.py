"""Trace two (source §7.6–7.9): text to image through CFG and DDIM on toy latent models.

The pipeline's names load it on first use, so that ``import labkit.diffusion.ddim`` stays a kernel import
(the pipeline brings the text encoder, ``labkit.nn`` and the recorder: some 30 ms more).
"""

from importlib import import_module

from labkit.diffusion.ddim import alphas_cumprod, ddim_step, inference_timesteps
from labkit.diffusion.philox import philox4x32_10, seed_to_key

PIPELINE_NAMES = ("DiffusionConfig", "DiffusionRun", "run_diffusion")
__all__ = ["alphas_cumprod", "ddim_step", "inference_timesteps", "philox4x32_10", "seed_to_key", *PIPELINE_NAMES]


def __getattr__(name: str):
    if name in PIPELINE_NAMES:
        return getattr(import_module("labkit.diffusion.pipeline"), name)
    raise AttributeError(f"module 'labkit.diffusion' has no attribute {name!r}")
