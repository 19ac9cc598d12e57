"""Trace two as a kind: ``DIFFUSION``, one ``labkit.core.kinds.TraceKind`` (one line of ``labkit.trace.kinds``'s
table)."""

from labkit.core import faults as suspects
from labkit.core.events import digest_bytes
from labkit.core.kinds import TraceContract, TraceKind
from labkit.diffusion.clauses import CLAUSES
from labkit.diffusion.config import DiffusionConfig, DiffusionHooks, DiffusionRun
from labkit.diffusion.faults import FAULTS
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
    suspects={
        ("condition.encoded", "tensors"): suspects.TEXT_ENCODER,
        ("condition.encoded", "discrete_state"): suspects.CONDITIONS,
        ("latent.initialized", "rng_counter"): suspects.PRNG_KEY_MAPPING,
        ("latent.initialized", "tensors"): suspects.PRNG_OR_NORMAL,
        ("denoise.updated", "discrete_state"): suspects.SCHEDULE_CONFIGURATION,
        ("denoise.updated", "tensors"): suspects.DENOISE_UPDATE,
        ("denoise.updated", "rng_counter"): suspects.SAMPLER_NOISE,
        ("vae.decoded", "tensors"): suspects.VAE_DECODE,
        ("image.encoded", "tensors"): suspects.PNG_POSTPROCESS,
        ("image.encoded", "discrete_state"): suspects.PNG_POSTPROCESS,
        ("*", "artifact_ids"): suspects.DIFFUSION_ARTIFACTS,
    },
    component_suspects={
        "scheduler": suspects.DDIM_SCHEDULER,
        "sampler": suspects.DDIM_SCHEDULER,
        "vae": suspects.VAE_DECODER,
    },
    field_suspects={
        "cfg_batch_order": suspects.CFG_BATCH_ORDER,
        "scheduler.timesteps": suspects.TIMESTEP_SPACING,
        "scheduler.eta": suspects.SAMPLER_ETA,
        "seed": suspects.SEED_MAPPING,
        "tensors.z_": suspects.PRNG_COUNTER,
        "latent_scaling": suspects.VAE_SCALING,
        "tensors.png": suspects.PNG_ENCODER,
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


DIFFUSION = TraceKind(
    name="diffusion",
    help="trace two: text to image through CFG and DDIM",
    config=DiffusionConfig,
    hooks=DiffusionHooks,
    run=run_diffusion,
    contract=CONTRACT,
    faults=FAULTS,
    fixture="diffusion",
    summary=summary,
    writes_by_default=False,  # ``labkit trace diffusion`` writes a trace only with ``--out``
    outputs={"png": ("write the final PNG to PATH", DiffusionRun.write_png)},
    clauses=CLAUSES,
)
