"""Trace two's configuration (§7.6), the hooks a reader's function plugs into, and the run's state."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from labkit.core.events import TraceRecorder
from labkit.core.guards import real_number
from labkit.core.runtime import Config, Hooks, hook
from labkit.diffusion.ddim import SPACINGS, inference_timesteps
from labkit.diffusion.denoiser import DENOISER_ID
from labkit.diffusion.guidance import check_guidance_scale
from labkit.diffusion.normal import PhiloxNormalStream
from labkit.diffusion.text_encoder import TEXT_ENCODER_ID
from labkit.diffusion.vae import VAE_ID

PROMPT = "雨夜车站，一把留在长椅上的红伞，纪实摄影。"
CFG_ORDER = ("negative", "positive")


@dataclass(frozen=True)
class DiffusionConfig(Config):
    """The configuration of §7.6.  The models, sampler, PRNG, PNG encoder and shapes are the only ones the
    fixtures provide: constants of every run (class attributes), not fields to change."""

    text_encoder_id: ClassVar[str] = TEXT_ENCODER_ID
    denoiser_id: ClassVar[str] = DENOISER_ID
    vae_id: ClassVar[str] = VAE_ID
    prediction_type: ClassVar[str] = "epsilon"
    latent_shape: ClassVar[tuple[int, ...]] = (1, 4, 64, 64)
    latent_dtype: ClassVar[str] = "float32"
    sampler: ClassVar[str] = "ddim-v1"
    prng: ClassVar[str] = "Philox4x32-10"
    normal_transform: ClassVar[str] = "box-muller-v1"
    png_encoder: ClassVar[str] = "pillow-png-z1-v1"

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
        real_number("eta", self.eta, 0.0, expected="a number >= 0")
        check_guidance_scale(self.guidance_scale)  # the kernel's own check of w (the one check there is)
        if sorted(self.cfg_order) != sorted(CFG_ORDER):
            raise ValueError(f"cfg_order must be a permutation of {CFG_ORDER}, got {self.cfg_order!r}")
        inference_timesteps(self.num_inference_steps, self.timestep_spacing)  # validates the count
        PhiloxNormalStream(self.seed, self.counter_start)  # validates seed and counter

    @property
    def timesteps(self) -> list[int]:
        return inference_timesteps(self.num_inference_steps, self.timestep_spacing)


@dataclass(frozen=True)
class DiffusionHooks(Hooks):
    """Substitutes for pieces of ``run_diffusion`` (the exercises use them); ``None`` keeps the library's.
    What a hook returns is recorded as is, so a comparison with the golden trace shows where it departs."""

    #: replaces ``normal.blocks_to_normals``: the initial latent and any η > 0 noise
    words_to_normals: Callable | None = hook("a function (words uint32 [B, 4]) -> normals [4B]")
    #: replaces ``guidance.classifier_free_guidance``: ε batch [2, 4, 64, 64] (negative, positive) → ε̂ [1, 4, 64, 64]
    cfg_combine: Callable | None = hook("a function (epsilon_batch, guidance_scale) -> epsilon_guided")
    #: replaces ``ddim.ddim_step`` (η = 0): ``prev_t`` is None after the last timestep, ``alpha_bars`` the
    #: read-only ᾱ table float64 [1000]; z_prev and x0_hat have z_t's shape [1, 4, 64, 64]
    scheduler_step: Callable | None = hook("a function (z_t, epsilon, t, prev_t, alpha_bars) -> (z_prev, x0_hat)")


def call_scheduler_step(step, latent, epsilon, t, prev_t, table):
    """Call ``hooks.scheduler_step`` and check that it returns (z_prev, x̂₀) of the latent's shape."""
    result = step(latent, epsilon, int(t), None if prev_t is None else int(prev_t), table)
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise ValueError(f"hooks.scheduler_step must return a pair (z_prev, x0_hat), got {type(result).__name__}")
    names = ("z_prev", "x0_hat")
    return tuple(of_latent_shape("scheduler_step", n, a, latent) for n, a in zip(names, result, strict=True))


def of_latent_shape(hook: str, name: str, value, latent: np.ndarray) -> np.ndarray:
    """What ``hooks.<hook>`` returned as ``name``, as an array of the latent's shape (else a ValueError)."""
    array = np.asarray(value)
    if array.shape != latent.shape:
        raise ValueError(
            f"hooks.{hook} must return {name} of the latent's shape {list(latent.shape)}, got {list(array.shape)}"
        )
    return array


@dataclass
class DiffusionRun:
    """One run: what its steps (``pipeline.STEPS``) share and what they computed, in §7.7's shapes."""

    config: DiffusionConfig
    rec: TraceRecorder = field(repr=False)
    hooks: DiffusionHooks = field(repr=False)
    models: tuple = field(repr=False)  # (text encoder, denoiser, VAE)
    events: list[dict] = field(init=False)  # the recorder's
    input_ids: np.ndarray | None = None  # int64 [2, 12], rows in cfg_order
    condition_batch: np.ndarray | None = None  # float32 [2, 12, 768], rows in cfg_order
    gates: dict[str, np.ndarray] = field(default_factory=dict)  # concept gates per branch, float64 [6]
    #: (t, z_t float32 [1, 4, 64, 64]) from z_999 on; the last entry, z_0 after the final
    #: step, is tagged t = −1 because it belongs to no training timestep
    latents: list[tuple[int, np.ndarray]] = field(default_factory=list)
    stream: PhiloxNormalStream | None = field(default=None, repr=False)  # the noise stream, from the initial latent on
    x0_hats: list[np.ndarray] = field(default_factory=list)  # float32 [1, 4, 64, 64] per step
    epsilon_guided: list[np.ndarray] = field(default_factory=list)
    pixels: np.ndarray | None = None  # float32 [1, 3, 512, 512]
    image: np.ndarray | None = None  # uint8 [512, 512, 3]
    png: bytes = b""

    def __post_init__(self):
        self.events = self.rec.events

    def write_png(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.png)
        return path
