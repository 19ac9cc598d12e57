"""Trace two, end to end: text → conditions → Philox latent → CFG + DDIM → VAE → PNG (§7.6–7.7).

``run_diffusion(config)`` runs the fixed configuration of §7.6 and records events d00–d08, one
step of ``STEPS`` per group (each ``step(run)``, driven by ``labkit.core.runtime.run_steps``):

    d00 condition.encoded    text IDs [1, 12] ×2        → condition_batch [2, 12, 768]
    d01 latent.initialized   seed, counter 0             → z_999 [1, 4, 64, 64]
    d02…d05 denoise.updated  z_t, t; ε_batch [2, 4, 64, 64] → z_prev (the whole latent, replaced)
    d06 vae.decoded          z_0 [1, 4, 64, 64]          → pixels [1, 3, 512, 512]
    d07 image.encoded        uint8 pixels                → PNG bytes, result object
    d08 response.completed   image reference             → FINISHED
"""

from functools import lru_cache
from pathlib import Path

import numpy as np

from labkit.core.events import TraceRecorder, digest_bytes, tensor_summary
from labkit.core.runtime import checked_run_arguments, run_steps
from labkit.diffusion import ddim
from labkit.diffusion.config import DiffusionConfig, DiffusionHooks, DiffusionRun, call_scheduler_step, of_latent_shape
from labkit.diffusion.denoiser import load_denoiser
from labkit.diffusion.guidance import classifier_free_guidance
from labkit.diffusion.normal import PhiloxNormalStream
from labkit.diffusion.text_encoder import TOKENIZER_ID, load_text_encoder
from labkit.diffusion.vae import encode_png, load_vae, png_zlib_version, to_uint8


@lru_cache(maxsize=4)
def load_models(root: str | Path | None = None):
    """(text encoder, denoiser, VAE) from ``root`` (default ``fixtures/diffusion``), cached: every run of
    the session shares them, so their arrays are read-only (an edit raises instead of changing later runs)."""
    models = load_text_encoder(root), load_denoiser(root), load_vae(root)
    for array in (value for model in models for value in vars(model).values() if isinstance(value, np.ndarray)):
        array.flags.writeable = False
    return models


def _tensor(array, level: str, position=None, *, digest: bool = False, values: int = 0) -> dict:
    """A tensor summary with its comparison level (latent, pixel or png) always explicit."""
    summary = tensor_summary(array, position, digest=digest, stats=not digest)
    if values:
        flat = np.asarray(array).reshape(-1)[:values]
        summary["values"] = [round(float(v), 6) for v in flat]
    summary["level"] = level
    return summary


def run_diffusion(
    config: DiffusionConfig | None = None,
    hooks: DiffusionHooks | None = None,
    *,
    root: str | Path | None = None,
    decode: bool = True,
) -> DiffusionRun:
    """Run trace two under ``config`` (default: §7.6) and record d00–d08; a substituted
    ``hooks.scheduler_step`` is deterministic (η = 0).  ``decode=False`` stops after the loop (d00–d05):
    the latent-level part, compared under a tolerance (pixels and PNG bytes are compared exactly)."""
    config, hooks = checked_run_arguments(config, hooks, DiffusionConfig, DiffusionHooks)
    if hooks.scheduler_step is not None and config.eta != 0:
        raise ValueError(f"hooks.scheduler_step is a deterministic DDIM step (eta = 0); got eta={config.eta}")
    run = DiffusionRun(config, TraceRecorder(config.trace_id, prefix="d"), hooks, load_models(root))
    run_steps(STEPS if decode else STEPS[: STEPS.index(denoise) + 1], run)
    return run


def encode_conditions(run: DiffusionRun) -> None:
    """d00: c_neg and c_pos [1, 12, 768] each, batched in cfg_order (negative first)."""
    (encoder, denoiser, _), config, rec = run.models, run.config, run.rec
    tokenizer, order = encoder.tokenizer, list(config.cfg_order)
    ids = {"positive": tokenizer.encode(config.prompt), "negative": tokenizer.encode(config.negative_prompt)}
    embeddings = {name: encoder.encode_ids(ids[name][None, :]) for name in ids}  # [1, 12, 768] each
    condition_batch = np.concatenate([embeddings[name] for name in order], axis=0)  # [2, 12, 768]
    payload = {
        "artifacts": {"text_encoder_id": encoder.encoder_id, "tokenizer_id": TOKENIZER_ID},
        "prompt": config.prompt,
        "negative_prompt": config.negative_prompt,
        "input_ids": ids["positive"].tolist(),
        "negative_ids": ids["negative"].tolist(),
        "pieces": tokenizer.pieces(config.prompt),
        "sequence_length": int(tokenizer.max_length),
        "cfg_batch_order": order,
        "tensors": {
            "c_neg": _tensor(embeddings["negative"], "latent"),
            "c_pos": _tensor(embeddings["positive"], "latent"),
            "condition_batch": _tensor(condition_batch, "latent", {"rows": order}),
        },
    }
    rec.emit("text_encoder", "condition.encoded", None, payload)
    run.gates = {name: denoiser.gates(embeddings[name][0]) for name in ("negative", "positive")}
    run.input_ids, run.condition_batch = np.stack([ids[name] for name in order]), condition_batch


def initial_latent(run: DiffusionRun) -> None:
    """d01: z_T [1, 4, 64, 64] from Philox4x32-10 + Box–Muller, counter from counter_start."""
    config, rec = run.config, run.rec
    timesteps = config.timesteps
    stream = run.stream = PhiloxNormalStream(config.seed, config.counter_start, to_normals=run.hooks.words_to_normals)
    draw = stream.normals(int(np.prod(config.latent_shape)))
    latent = draw.values.reshape(config.latent_shape).astype(np.float32)
    payload = {
        "artifacts": {"sampler": config.sampler, "prng": config.prng, "normal_transform": config.normal_transform},
        "seed": int(config.seed),
        "philox_key": [f"0x{int(w):08x}" for w in stream.key],
        "latent_shape": list(config.latent_shape),
        "latent_dtype": config.latent_dtype,
        "normals_drawn": int(draw.values.size),
        "scheduler": {
            "timesteps": timesteps,
            "timestep_spacing": config.timestep_spacing,
            "num_train_timesteps": ddim.NUM_TRAIN_TIMESTEPS,
            "beta_schedule": f"scaled-linear {ddim.BETA_START}..{ddim.BETA_END}",
            "prediction_type": config.prediction_type,
            "eta": float(config.eta),
            "final_alpha_bar": ddim.FINAL_ALPHA_BAR,
        },
        "rng": {"counter_before": draw.counter_before, "counter_after": draw.counter_after},
        "tensors": {f"z_{timesteps[0]}": _tensor(latent, "latent", {"timestep": timesteps[0]}, values=4)},
    }
    rec.emit("sampler", "latent.initialized", 0, payload)
    run.latents.append((timesteps[0], latent))


def denoise(run: DiffusionRun) -> None:
    """d02–d05: one ``denoise_step`` per timestep of the schedule."""
    timesteps, schedule = run.config.timesteps, ddim.alphas_cumprod()
    schedule.flags.writeable = False  # a hook may read the ᾱ table, never change it
    alpha_bars = ddim.previous_alpha_bars(timesteps, schedule)  # (ᾱ_t, ᾱ_prev); ᾱ_prev = 1.0 after the last
    for number, (t, prev_t) in enumerate(zip(timesteps, [*timesteps[1:], None], strict=True), start=1):
        denoise_step(run, schedule, alpha_bars[number - 1], t, prev_t)


def denoise_step(run: DiffusionRun, schedule: np.ndarray, alpha_bars: tuple, t: int, prev_t: int | None) -> None:
    """One step from timestep t to prev_t (None after the last), with (ᾱ_t, ᾱ_prev) = ``alpha_bars``: one
    CFG network evaluation, then one DDIM step."""
    hooks, (a_t, a_prev), (_, denoiser, _) = run.hooks, alpha_bars, run.models
    config, latent, number = run.config, run.latents[-1][1], len(run.x0_hats) + 1
    latent_batch = np.concatenate([latent, latent], axis=0)  # [2, 4, 64, 64]: the same z_t twice
    timestep_batch = np.array([t, t], dtype=np.int64)  # [2]
    epsilon_batch = denoiser(latent_batch, timestep_batch, run.condition_batch)  # [2, 4, 64, 64]
    # ε̂ = ε_neg + w(ε_pos − ε_neg); the split assumes negative first, whatever cfg_order built
    guided = (hooks.cfg_combine or classifier_free_guidance)(epsilon_batch, float(config.guidance_scale))
    epsilon = of_latent_shape("cfg_combine", "epsilon_guided", guided, latent)
    sigma = ddim.ddim_sigma(a_t, a_prev, float(config.eta))
    counter_before = run.stream.counter
    noise = run.stream.normals(latent.size).values.reshape(latent.shape) if sigma > 0.0 else None
    if hooks.scheduler_step is None:
        new_latent, x0_hat = ddim.ddim_step(latent, epsilon, a_t, a_prev, eta=float(config.eta), noise=noise)
    else:
        new_latent, x0_hat = call_scheduler_step(hooks.scheduler_step, latent, epsilon, t, prev_t, schedule)
    step_id, at = f"step-{number}", {"timestep": int(t)}
    payload = {
        "artifacts": {"denoiser_id": denoiser.denoiser_id, "sampler": config.sampler},
        "step_id": step_id,
        "timestep": int(t),
        "prev_timestep": None if prev_t is None else int(prev_t),
        "alpha_bar_t": round(a_t, 10),
        "alpha_bar_prev": round(a_prev, 10),
        "sigma": round(sigma, 10),
        "guidance_scale": float(config.guidance_scale),
        "batch": {
            "latent_batch": list(latent_batch.shape),
            "timestep_batch": [int(t), int(t)],
            "condition_batch": list(run.condition_batch.shape),
            "condition_rows": list(config.cfg_order),
        },
        "preview": {"mode": "replace-frame", "step_id": step_id, "shows": "x0_hat"},
        "rng": {"counter_before": counter_before, "counter_after": run.stream.counter},
        "tensors": {
            "latent_batch": _tensor(latent_batch, "latent", at),
            "epsilon_batch": _tensor(epsilon_batch, "latent", at),
            "epsilon_guided": _tensor(epsilon, "latent", at),
            "x0_hat": _tensor(x0_hat, "latent", at),
            f"z_{0 if prev_t is None else prev_t}": _tensor(new_latent, "latent", {"timestep": prev_t}, values=4),
        },
    }
    run.rec.emit("denoise_loop", "denoise.updated", number, payload)
    run.latents.append((-1 if prev_t is None else prev_t, new_latent))
    run.x0_hats.append(x0_hat)
    run.epsilon_guided.append(epsilon)


def decode_latent(run: DiffusionRun) -> None:
    """d06 — VAE decode: z_0 / s, mix, upsample, tanh → pixels [1, 3, 512, 512] in [−1, 1]."""
    latent, vae = run.latents[-1][1], run.models[2]
    run.pixels = vae.decode(latent, apply_scaling=run.config.vae_scaling)
    payload = {
        "artifacts": {"vae_id": vae.vae_id},
        "latent_scaling": {"factor": vae.scaling_factor, "applied": bool(run.config.vae_scaling)},
        "upsampling": "bilinear-8x",
        "image_shape": list(run.pixels.shape),
        "tensors": {
            "z_0": _tensor(latent, "latent", {"timestep": 0}),
            "pixels": _tensor(run.pixels, "pixel", {"range": [-1, 1]}),
        },
    }
    run.rec.emit("vae", "vae.decoded", None, payload)


def encode_image(run: DiffusionRun) -> None:
    """d07 — uint8 pixels and the PNG, named by a result object; d08 — the response references it."""
    rec, image = run.rec, to_uint8(run.pixels)
    png = encode_png(image, dict(run.config.png_text) or None)
    digest = digest_bytes(png)
    image_id = "img-" + digest.split(":")[1][:16]
    height, width = image.shape[:2]
    result = {"image_id": image_id, "media_type": "image/png", "width": width, "height": height, "digest": digest}
    payload = {
        "artifacts": {"png_encoder": run.config.png_encoder},
        "postprocess": "uint8 = round(clip((x + 1) / 2, 0, 1) * 255), HWC",
        "png_zlib": png_zlib_version(),
        "tensors": {
            "image_uint8": _tensor(image, "pixel", {"layout": "HWC"}, digest=True),
            "png": {"shape": [len(png)], "dtype": "uint8", "position": None, "digest": digest, "level": "png"},
        },
        "commit": {"result": result},
    }
    rec.emit("image_encoder", "image.encoded", None, payload)
    commit = {"status": "FINISHED", "image_id": image_id, "digest": digest}
    rec.emit("gateway", "response.completed", None, {"image_ref": image_id, "commit": commit})
    run.image, run.png = image, png


#: the steps of a run, in event order (``run_diffusion`` runs them; without ``decode``, up to ``denoise``)
STEPS = (encode_conditions, initial_latent, denoise, decode_latent, encode_image)
