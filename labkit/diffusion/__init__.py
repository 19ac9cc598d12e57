"""Trace two (source §7.6–7.9): text to image through CFG and DDIM on toy latent models.

One idea per file:

- ``philox``  — Philox4x32-10, counter-based random words (``philox4x32_10``)
- ``normal``  — uint32 → uniform → Box–Muller normals, with the counter tracked
- ``ddim``    — the training noise schedule, the timesteps and ``ddim_step``
- ``text_encoder`` — toy-text-encoder-v2 (tokenizer and 768-wide encoder)
- ``denoiser`` — toy-latent-denoiser-v3 (ε-prediction)
- ``vae``     — toy-vae-v1 (latent → pixels → PNG)
- ``scene``   — the procedural picture the fixtures are drawn from
- ``guidance`` — classifier-free guidance, ε̂ = ε_neg + w(ε_pos − ε_neg)
- ``pipeline`` — the run and its events d00–d08
- ``hooks``   — ``DiffusionHooks``: the pieces a reader's function may replace in a run
- ``faults``  — named faults as configurations
- ``fixture`` — the recipe for fixtures/diffusion/ and the golden trace
- ``kind``    — trace two as a ``TraceKind`` (registered in ``labkit.trace.kinds``)

The kernels (``philox``, ``normal``, ``ddim``, ``guidance``) import nothing of the runtime,
and this package loads the pipeline only when one of its names is first used, so
``import labkit.diffusion.ddim`` stays a kernel import.
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
