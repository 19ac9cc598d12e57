"""Trace two as a kind: this module's names are the fields of its ``labkit.core.kinds.TraceKind``
(``TraceKind.declared_by``); ``labkit.trace.kinds`` declares it and imports it on first use."""

from __future__ import annotations

from labkit.core import faults as S
from labkit.core.events import digest_bytes
from labkit.core.kinds import TraceContract
from labkit.diffusion.clauses import CLAUSES as clauses
from labkit.diffusion.config import DiffusionConfig as config
from labkit.diffusion.config import DiffusionHooks as hooks
from labkit.diffusion.config import DiffusionRun
from labkit.diffusion.faults import FAULTS as faults
from labkit.diffusion.fixture import build as build_fixture
from labkit.diffusion.pipeline import run_diffusion as run

help = "trace two: text to image through CFG and DDIM"
fixture = "diffusion"
#: ``labkit trace diffusion`` writes a trace only with ``--out``; ``--png`` writes the image
writes_by_default = False
outputs = {"png": ("write the final PNG to PATH", DiffusionRun.write_png)}
contract = TraceContract(
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


def summary(result: DiffusionRun, fault: str | None) -> list[str]:
    """What ``labkit trace diffusion`` prints: one line per event, then the PNG."""
    lines = []
    for event in result.events:
        payload, detail = event["payload"], ""
        if "timestep" in payload:
            detail = f"t={payload['timestep']} → {payload['prev_timestep']}"
        rng = payload.get("rng")
        if rng:
            detail += f"  rng counter {rng['counter_before']}→{rng['counter_after']}"
        lines.append(f"{event['event_id']} {event['event_type']:22s} {detail}".rstrip())
    lines.append(f"png {digest_bytes(result.png)} ({len(result.png)} bytes)" + (f"; fault {fault}" if fault else ""))
    return lines
