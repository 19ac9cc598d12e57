"""The DDIM latent player's data: z_t's four channels after each step and the decoded x̂₀ preview, at
each guidance scale a page computed.  Latents travel as data, not pictures: each channel, subsampled to
32 × 32, quantised to uint8 over [−2.5, 2.5] and base32-encoded (mystmd 1.11 stalls on directive bodies
holding many base64 strings), with its exact statistics (from the full 64 × 64 channel).  The preview,
the VAE decoding of the step's x̂₀ (of the noise at step 0), is a 64 × 64 JPEG, base32-encoded.

    data = {"player": "latents", "channels": [4 names], "size": 32, "limit": 2.5,
            "start": {"guidance": "5", "step": 4},
            "scales": {"5": [{"step", "t", "name", "latent": [4 base32], "stats": [[mean, std, min, max] × 4],
                              "preview": base32 JPEG bytes, "preview_of"}, …]}}
"""

import base64
import io

import numpy as np
from PIL import Image

from labkit.core.guards import real_number
from labkit.diffusion.pipeline import DiffusionConfig, load_models, run_diffusion
from labkit.diffusion.vae import to_uint8
from labkit.reader.players.data import label, r4, words

CHANNEL_NAMES = ("0 luminance", "1 red-cyan", "2 blue-yellow", "3 light")
LIMIT = 2.5
SIZE = 32
PREVIEW = 64
PAGE_SCALES = (0.0, 1.0, 5.0, 9.0)


def quantise(channel: np.ndarray, size: int = SIZE, limit: float = LIMIT) -> np.ndarray:
    """[64, 64] float → [size, size] uint8: every (64/size)-th value, −limit → 0, +limit → 255."""
    stride = channel.shape[0] // size
    sub = np.asarray(channel, dtype=np.float64)[::stride, ::stride]
    return np.rint((np.clip(sub, -limit, limit) + limit) / (2 * limit) * 255).astype(np.uint8)


def b32(data: bytes) -> str:
    """Bytes → base32 without padding (A–Z, 2–7)."""
    return base64.b32encode(data).decode("ascii").rstrip("=")


def preview_jpeg(image: np.ndarray, size: int = PREVIEW) -> str:
    """uint8 [H, W, 3] → a size × size JPEG, base32-encoded."""
    buffer = io.BytesIO()
    Image.fromarray(image).resize((size, size), Image.BILINEAR).save(buffer, format="JPEG", quality=85)
    return b32(buffer.getvalue())


def scale_frames(guidance: float, run=None) -> list[dict]:
    """One frame per state of ``run`` (a ``DiffusionRun``; none: the loop run at that guidance
    scale): step 0 (the noise) … the end."""
    run = run or run_diffusion(DiffusionConfig().replace(guidance_scale=float(guidance)))
    vae, frames = load_models()[2], []
    for step, (t, latent) in enumerate(run.latents):
        z = np.asarray(latent[0], dtype=np.float64)  # [4, 64, 64]
        source = latent if step == 0 else run.x0_hats[step - 1]
        image = to_uint8(vae.decode(source, apply_scaling=run.config.vae_scaling))
        frames.append(
            {
                "step": step,
                "t": int(t),
                "name": "z_0" if t < 0 else f"z_{int(t)}",
                "latent": [b32(quantise(c).tobytes()) for c in z],
                "stats": [[r4(c.mean()), r4(c.std()), r4(c.min()), r4(c.max())] for c in z],
                "preview": preview_jpeg(image),
                "preview_of": words("the initial noise, decoded as is", "初始噪声，原样解码")
                if step == 0
                else words(f"x̂₀ of step {step}, decoded", f"第 {step} 步的 x̂₀，解码后"),
            }
        )
    return frames


def static_data(runs=None, scales=PAGE_SCALES, start: float = 5.0) -> dict:
    """Frames at every guidance scale in ``scales`` (``runs``: scale → DiffusionRun already made)."""
    runs = dict(runs or {})
    out = {label(float(g)): scale_frames(g, runs.get(float(g))) for g in scales}
    first = next(iter(out.values()))
    return {
        "title": words(
            "DDIM, step by step: the four latent channels and the x̂₀ preview",
            "DDIM，逐步查看：潜变量的四个通道与 x̂₀ 预览",
        ),
        "channels": list(CHANNEL_NAMES),
        "size": SIZE,
        "limit": LIMIT,
        "start": {"guidance": label(float(start)), "step": len(first) - 1},
        "scales": out,
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"guidance": g}``: the loop run at scale g, its frames added and shown."""
    g = real_number("guidance", request.get("guidance"), expected="a number")
    if not 0 <= g <= 20:
        raise ValueError(f"guidance must be a number in [0, 20], got {g!r}")
    key = label(g)
    scales = data["scales"] if key in data["scales"] else {**data["scales"], key: scale_frames(g)}
    return {**data, "scales": scales, "start": {**data["start"], "guidance": key}}
