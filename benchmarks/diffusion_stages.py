"""Trace two's time, split by stage (§7.6–7.7), measured through labkit's public pieces.

``labkit.diffusion.run_diffusion`` does not time itself, so the stages are run here one by
one with the same public functions, in the pipeline's order, on the default configuration:

    load        text encoder, denoiser and VAE read from fixtures/diffusion (uncached)
    condition   tokenize prompt and negative prompt, encode both → condition batch [2, 12, 768]
    noise       Philox4x32-10 + Box–Muller → z_T [1, 4, 64, 64]
    denoiser    the CFG batch through the network, once per DDIM step (ε_batch [2, 4, 64, 64])
    ddim        ε̂ = ε_neg + w(ε_pos − ε_neg) and one DDIM update, per step
    vae         z_0 → pixels [1, 3, 512, 512]
    png         uint8 conversion and PNG encoding

and the whole ``run_diffusion`` (models already loaded) is timed beside them; what the
trace adds on top of the stages (events, tensor summaries, digests) is the difference.
The staged PNG must be byte-identical to the trace's PNG, else ``matches_trace`` is false.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.stats import scaled, summarize

STAGES = ("load", "condition", "noise", "denoiser", "ddim", "vae", "png")


def _staged_once() -> tuple[dict[str, float], bytes]:
    from labkit.diffusion import ddim
    from labkit.diffusion.denoiser import load_denoiser
    from labkit.diffusion.normal import PhiloxNormalStream
    from labkit.diffusion.pipeline import DiffusionConfig
    from labkit.diffusion.text_encoder import load_text_encoder
    from labkit.diffusion.vae import encode_png, load_vae, to_uint8

    config = DiffusionConfig()
    spent = dict.fromkeys(STAGES, 0.0)
    clock = time.perf_counter

    t = clock()
    encoder, denoiser, vae = load_text_encoder(), load_denoiser(), load_vae()
    spent["load"] = clock() - t

    t = clock()
    texts = {"positive": config.prompt, "negative": config.negative_prompt}
    rows = [encoder.encode_ids(encoder.tokenizer.encode(texts[name])[None, :]) for name in config.cfg_order]
    condition = np.concatenate(rows, axis=0)  # [2, 12, 768]
    spent["condition"] = clock() - t

    t = clock()
    stream = PhiloxNormalStream(config.seed, config.counter_start)
    latent = stream.normals(int(np.prod(config.latent_shape))).values.reshape(config.latent_shape)
    latent = latent.astype(np.float32)  # z_T [1, 4, 64, 64]
    spent["noise"] = clock() - t

    timesteps = config.timesteps
    pairs = ddim.previous_alpha_bars(timesteps, ddim.alphas_cumprod())
    negative_first = list(config.cfg_order).index("negative") == 0
    for step_t, (a_t, a_prev) in zip(timesteps, pairs, strict=True):
        t = clock()
        eps = denoiser(np.concatenate([latent, latent]), np.array([step_t, step_t], dtype=np.int64), condition)
        spent["denoiser"] += clock() - t
        t = clock()
        eps_neg, eps_pos = (eps[0:1], eps[1:2]) if negative_first else (eps[1:2], eps[0:1])
        guided = (eps_neg + np.float32(config.guidance_scale) * (eps_pos - eps_neg)).astype(np.float32)
        sigma = ddim.ddim_sigma(a_t, a_prev, float(config.eta))
        noise = stream.normals(latent.size).values.reshape(latent.shape) if sigma > 0 else None
        latent, _ = ddim.ddim_step(latent, guided, a_t, a_prev, eta=float(config.eta), noise=noise)
        spent["ddim"] += clock() - t

    t = clock()
    pixels = vae.decode(latent, apply_scaling=config.vae_scaling)
    spent["vae"] = clock() - t

    t = clock()
    png = encode_png(to_uint8(pixels), dict(config.png_text) or None)
    spent["png"] = clock() - t
    return spent, png


def unavailable(reason: str) -> dict:
    return {
        "available": False,
        "reason": reason,
        "stages": list(STAGES),
        "stage_ms": None,
        "share_of_stages": None,
        "trace_ms": None,
        "trace_overhead_ms": None,
        "matches_trace": None,
    }


def diffusion_stages(repeats: int = 3) -> dict:
    """Median/min/max milliseconds per stage, the whole trace's time, and the byte check."""
    from labkit.diffusion.pipeline import load_models, run_diffusion

    load_models()  # the trace's model cache, warmed
    samples = {name: [] for name in STAGES}
    trace = []
    png = trace_png = b""
    _staged_once()  # warm-up (imports, page cache)
    run_diffusion()  # warm-up (the event validator's imports)
    for _ in range(repeats):
        spent, png = _staged_once()
        for name in STAGES:
            samples[name].append(spent[name])
        t = time.perf_counter()
        trace_png = run_diffusion().png
        trace.append(time.perf_counter() - t)
    stage_ms = {name: scaled(summarize(values), 1000.0) for name, values in samples.items()}
    computed = {name: stage_ms[name]["median"] for name in STAGES if name != "load"}
    total = sum(computed.values())
    trace_ms = scaled(summarize(trace), 1000.0)
    return {
        "available": True,
        "reason": None,
        "stages": list(STAGES),
        "stage_ms": stage_ms,
        "share_of_stages": {name: value / total for name, value in computed.items()},
        "trace_ms": trace_ms,
        "trace_overhead_ms": trace_ms["median"] - total,
        "matches_trace": png == trace_png,
    }


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(diffusion_stages(), indent=2))
