"""Trace two (source §7.6–7.9): text to image through CFG and DDIM on toy latent models.

The kernels (``philox``, ``normal``, ``ddim``, ``guidance``) import nothing of the runtime, and this
package loads the pipeline only when one of its names is first used, so ``import labkit.diffusion.ddim``
stays a kernel import.
"""

from importlib import import_module

_LAZY = {
    "alphas_cumprod": "labkit.diffusion.ddim",
    "ddim_step": "labkit.diffusion.ddim",
    "inference_timesteps": "labkit.diffusion.ddim",
    "philox4x32_10": "labkit.diffusion.philox",
    "seed_to_key": "labkit.diffusion.philox",
    "DiffusionConfig": "labkit.diffusion.pipeline",
    "DiffusionRun": "labkit.diffusion.pipeline",
    "run_diffusion": "labkit.diffusion.pipeline",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'labkit.diffusion' has no attribute {name!r}")
