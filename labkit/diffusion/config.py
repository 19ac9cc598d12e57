"""Trace two's configuration (§7.6) and what a run leaves behind.

``DiffusionConfig`` is the fixed configuration every field of which ``run_diffusion``
(``labkit.diffusion.pipeline``) honours; a fault is another ``DiffusionConfig``
(``labkit.diffusion.faults``).  ``DiffusionRun`` holds the events and the arrays a page shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from labkit.core.events import digest_bytes
from labkit.core.runtime import Config
from labkit.diffusion.ddim import SPACINGS, inference_timesteps
from labkit.diffusion.denoiser import DENOISER_ID
from labkit.diffusion.guidance import check_guidance_scale
from labkit.diffusion.normal import PhiloxNormalStream
from labkit.diffusion.text_encoder import TEXT_ENCODER_ID
from labkit.diffusion.vae import VAE_ID

PROMPT = "雨夜车站，一把留在长椅上的红伞，纪实摄影。"
SAMPLER_ID = "ddim-v1"
PRNG_ID = "Philox4x32-10"
NORMAL_TRANSFORM_ID = "box-muller-v1"
PNG_ENCODER_ID = "pillow-png-z6-v1"
CFG_ORDER = ("negative", "positive")


@dataclass(frozen=True)
class DiffusionConfig(Config):
    """The configuration of §7.6; every field is honoured by ``run_diffusion``.

    The models, sampler, PRNG and shapes of §7.6 are the only ones the book's fixtures
    provide: they are constants of every run (class attributes), not fields to change."""

    text_encoder_id: ClassVar[str] = TEXT_ENCODER_ID
    denoiser_id: ClassVar[str] = DENOISER_ID
    vae_id: ClassVar[str] = VAE_ID
    prediction_type: ClassVar[str] = "epsilon"
    latent_shape: ClassVar[tuple[int, ...]] = (1, 4, 64, 64)
    latent_dtype: ClassVar[str] = "float32"
    image_shape: ClassVar[tuple[int, ...]] = (1, 3, 512, 512)
    sampler: ClassVar[str] = SAMPLER_ID
    prng: ClassVar[str] = PRNG_ID
    normal_transform: ClassVar[str] = NORMAL_TRANSFORM_ID

    prompt: str = PROMPT
    negative_prompt: str = ""
    num_inference_steps: int = 4
    timestep_spacing: str = "trailing"
    eta: float = 0.0
    guidance_scale: float = 5.0
    seed: int = 314159
    counter_start: int = 0
    #: the order in which the CFG batch is *built*; the split always reads (negative, positive)
    cfg_order: tuple[str, str] = CFG_ORDER
    vae_scaling: bool = True
    png_text: tuple[tuple[str, str], ...] = ()
    trace_id: str = "trace-diffusion-001"

    def __post_init__(self):
        if not isinstance(self.prompt, str) or not isinstance(self.negative_prompt, str):
            raise ValueError("prompt and negative_prompt must be str")
        if self.timestep_spacing not in SPACINGS:
            raise ValueError(f"timestep_spacing must be one of {SPACINGS}, got {self.timestep_spacing!r}")
        if isinstance(self.eta, bool) or not isinstance(self.eta, (int, float)) or not self.eta >= 0:
            raise ValueError(f"eta must be a number >= 0, got {self.eta!r}")
        check_guidance_scale(self.guidance_scale)  # the kernel's own check of w (the one check there is)
        if sorted(self.cfg_order) != sorted(CFG_ORDER):
            raise ValueError(f"cfg_order must be a permutation of {CFG_ORDER}, got {self.cfg_order!r}")
        inference_timesteps(self.num_inference_steps, self.timestep_spacing)  # validates the count
        PhiloxNormalStream(self.seed, self.counter_start)  # validates seed and counter

    @property
    def timesteps(self) -> list[int]:
        return inference_timesteps(self.num_inference_steps, self.timestep_spacing)


@dataclass
class DiffusionRun:
    """Everything one run computed, plus its events; arrays keep their §7.7 shapes."""

    config: DiffusionConfig
    events: list[dict]
    input_ids: np.ndarray  # int64 [2, 12], rows in cfg_order
    condition_batch: np.ndarray  # float32 [2, 12, 768], rows in cfg_order
    gates: dict[str, np.ndarray]  # concept gates per branch, float64 [6]
    #: (t, z_t float32 [1, 4, 64, 64]) from z_999 on; the last entry, z_0 after the final
    #: step, is tagged t = −1 because it belongs to no training timestep
    latents: list[tuple[int, np.ndarray]]
    x0_hats: list[np.ndarray] = field(default_factory=list)  # float32 [1, 4, 64, 64] per step
    epsilon_guided: list[np.ndarray] = field(default_factory=list)
    pixels: np.ndarray | None = None  # float32 [1, 3, 512, 512]
    image: np.ndarray | None = None  # uint8 [512, 512, 3]
    png: bytes = b""

    @property
    def png_digest(self) -> str:
        return digest_bytes(self.png)

    def write_png(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.png)
        return path
