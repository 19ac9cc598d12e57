"""Trace two's fault catalogue: each fault is a changed ``DiffusionConfig``, nothing else.

Each entry says what it changes and where a first-divergence comparison against the golden
trace should stop: the event, the payload section that differs first (``artifacts``,
discrete ``state``, ``tensors``, ``rng`` or ``commit``), the key inside it, and the suspect
component.  Comparisons inside one event run in the §7.17 order: artifacts, discrete state,
tensors, RNG counter, commit.

>>> faulty_config("eta_positive").eta
1.0
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.diffusion.pipeline import DiffusionConfig


@dataclass(frozen=True)
class DiffusionFault:
    """One named fault: the configuration change and the divergence it should cause."""

    name: str
    description: str
    changes: tuple[tuple[str, object], ...]
    event_id: str  # the first divergent event against the golden trace
    section: str  # artifacts | state | tensors | rng | commit
    key: str  # the payload key (dotted) that differs first
    suspect: str  # the component a diagnosis should name


FAULTS: dict[str, DiffusionFault] = {f.name: f for f in (
    DiffusionFault(
        "cfg_order_swapped",
        "the CFG batch is built positive-first while the split still reads negative-first, "
        "so guidance pushes away from the prompt",
        (("cfg_order", ("positive", "negative")),),
        "d00", "state", "cfg_batch_order", "cfg batching"),
    DiffusionFault(
        "leading_timesteps",
        "the scheduler spaces its 4 steps 'leading' ([750, 500, 250, 0]) instead of 'trailing' "
        "([999, 749, 499, 249]): the loop starts from a less noisy level than the latent has",
        (("timestep_spacing", "leading"),),
        "d01", "state", "scheduler.timesteps", "scheduler"),
    DiffusionFault(
        "eta_positive",
        "eta = 1 turns DDIM stochastic: every step but the last draws fresh Gaussian noise, "
        "moving the RNG counter inside the loop",
        (("eta", 1.0),),
        "d01", "state", "scheduler.eta", "scheduler"),
    DiffusionFault(
        "other_seed",
        "seed 314160 instead of 314159: another Philox key, another initial latent",
        (("seed", 314160),),
        "d01", "state", "seed", "rng"),
    DiffusionFault(
        "counter_offset",
        "the same seed but the stream starts at counter 4096 (as if a previous image had "
        "used the first blocks): another initial latent under an identical configuration",
        (("counter_start", 4096),),
        "d01", "tensors", "z_999", "rng"),
    DiffusionFault(
        "vae_scaling_omitted",
        "the decoder forgets to divide by the scaling factor 0.18215: a washed-out image",
        (("vae_scaling", False),),
        "d06", "state", "latent_scaling.applied", "vae"),
    DiffusionFault(
        "png_timestamp",
        "the encoder writes a 'Creation Time' text chunk: identical pixels, other PNG bytes",
        (("png_text", (("Creation Time", "2026-11-29T08:00:00Z"),)),),
        "d07", "tensors", "png", "png encoder"),
)}


def fault_names() -> list[str]:
    return list(FAULTS)


def faulty_config(name: str, base: DiffusionConfig | None = None) -> DiffusionConfig:
    """``base`` (default: §7.6) with the named fault applied; the fault's name is recorded."""
    if name not in FAULTS:
        raise ValueError(f"fault must be one of {sorted(FAULTS)}, got {name!r}")
    base = base or DiffusionConfig()
    return base.replace(fault=name, **dict(FAULTS[name].changes))
