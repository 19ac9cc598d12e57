"""The exercises of the preface and chapter 7 without a runtime hook; every answer is computed from the
real kernels, fixtures and runtimes at check time, so a change to the kit moves the answer with it.
"""

from __future__ import annotations

import numpy as np

from labkit.check.core import value
from labkit.core.fixtures import fixture_path, read_json
from labkit.diffusion import DiffusionConfig, ddim_step
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import blocks_to_normals


@value
def philox_blocks_for_latent() -> int:
    per_block = blocks_to_normals(np.full((1, 4), 7, dtype=np.uint32)).size
    return int(np.prod(DiffusionConfig().latent_shape)) // per_block


@value
def cfg_other_convention() -> float:
    return float(DiffusionConfig().guidance_scale) - 1.0


@value
def cfg_scale_one() -> str:
    eps = np.random.default_rng(5).normal(size=(2, 4, 8, 8))
    guided = classifier_free_guidance(eps, 1.0)
    row = next(i for i in range(2) if np.allclose(guided[0], eps[i]))
    return "conditional" if DiffusionConfig().cfg_order[row] == "positive" else "unconditional"


@value
def x0_fed_as_epsilon() -> list[float]:
    fx = read_json(fixture_path("diffusion", "ddim-2d-subfixture.json"))
    z_prev, _ = ddim_step(np.array(fx["z_2"]), np.array([1.0, -1.0]), fx["alpha_bar"]["2"], fx["alpha_bar"]["1"])
    return [float(v) for v in np.ravel(z_prev)]
