"""Trace two as a kind (``labkit.core.kinds.TraceKind``): registered in ``labkit.trace.kinds``."""

from __future__ import annotations

from labkit.core import faults as S
from labkit.core.kinds import TraceContract, TraceKind
from labkit.diffusion.config import DiffusionConfig, DiffusionRun
from labkit.diffusion.faults import FAULTS
from labkit.diffusion.fixture import build
from labkit.diffusion.hooks import DiffusionHooks
from labkit.diffusion.pipeline import run_diffusion

CONTRACT = TraceContract(
    kind="diffusion",
    event_prefix="d",
    initial_object="condition tensors + initial noise",
    model_state="the whole latent and the current timestep",
    runtime_update="classifier-free guidance, DDIM scheduler step",
    irreversible_point="publishing the final file (defined by the application)",
    random_entry="the initial latent (seed, Philox counter, Box–Muller)",
    termination="the timestep schedule is exhausted",
    replay_core="tensor shapes, the schedule, the RNG key and counter",
    output_means="one whole media object",
    comparison_level="latent, pixel or PNG bytes (declared per tensor)",
    suspects={
        ("condition.encoded", "tensors"): S.TEXT_ENCODER,
        ("condition.encoded", "discrete_state"): S.CONDITIONS,
        ("latent.initialized", "rng_counter"): S.PRNG_KEY_MAPPING,
        ("latent.initialized", "tensors"): S.PRNG_OR_NORMAL,
        ("denoise.updated", "discrete_state"): S.SCHEDULE_CONFIGURATION,
        ("denoise.updated", "tensors"): S.DENOISE_UPDATE,
        ("denoise.updated", "rng_counter"): S.SAMPLER_NOISE,
        ("vae.decoded", "tensors"): S.VAE_DECODE,
        ("image.encoded", "tensors"): S.PNG_POSTPROCESS,
        ("image.encoded", "discrete_state"): S.PNG_POSTPROCESS,
        ("*", "artifact_ids"): S.DIFFUSION_ARTIFACTS,
    },
    component_suspects={"scheduler": S.DDIM_SCHEDULER, "sampler": S.DDIM_SCHEDULER, "vae": S.VAE_DECODER},
    field_suspects={
        "cfg_batch_order": S.CFG_BATCH_ORDER,
        "scheduler.timesteps": S.TIMESTEP_SPACING,
        "scheduler.eta": S.SAMPLER_ETA,
        "seed": S.SEED_MAPPING,
        "tensors.z_": S.PRNG_COUNTER,
        "latent_scaling": S.VAE_SCALING,
        "tensors.png": S.PNG_ENCODER,
    },
)


def summary(run: DiffusionRun, fault: str | None) -> list[str]:
    """What ``labkit trace diffusion`` prints: one line per event, then the PNG."""
    lines = []
    for event in run.events:
        payload, detail = event["payload"], ""
        if "timestep" in payload:
            detail = f"t={payload['timestep']} → {payload['prev_timestep']}"
        rng = payload.get("rng")
        if rng:
            detail += f"  rng counter {rng['counter_before']}→{rng['counter_after']}"
        lines.append(f"{event['event_id']} {event['event_type']:22s} {detail}".rstrip())
    lines.append(f"png {run.png_digest} ({len(run.png)} bytes)" + (f"; fault {fault}" if fault else ""))
    return lines


DIFFUSION = TraceKind(
    name="diffusion",
    help="trace two: text to image through CFG and DDIM",
    config=DiffusionConfig,
    hooks=DiffusionHooks,
    run=run_diffusion,
    contract=CONTRACT,
    faults=FAULTS,
    fixture="diffusion",
    build_fixture=build,
    summary=summary,
    writes_by_default=False,
    outputs={"png": ("write the final PNG to PATH", DiffusionRun.write_png)},
)
