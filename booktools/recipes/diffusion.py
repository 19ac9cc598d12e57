"""Recipe of trace two's fixtures: the three toy models, the §7.8 sub-fixture, the golden trace.

The picture the toy denoiser knows, a rainy-night station with a red umbrella on a bench, is painted here concept
by concept (``paint_layers``, in the order of ``CONCEPTS``); the difference between two consecutive canvases is
what one concept adds (the denoiser's stored deltas).  Everything comes from fixed seeds and is encoded by the
exact inverse of the toy VAE; nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from booktools.fixture_files import save_arrays
from labkit.core.events import write_jsonl
from labkit.core.fixtures import write_json
from labkit.diffusion.denoiser import DENOISER_ID, gaussian_blur
from labkit.diffusion.pipeline import run_diffusion
from labkit.diffusion.text_encoder import TEXT_ENCODER_ID, TOKENIZER_ID
from labkit.diffusion.vae import VAE_ID, VAEDecoder

#: the scene is painted at latent resolution, SIZE × SIZE, in RGB ∈ [−1, 1] plus a ``light`` channel (lamps
#: and their wet reflections)
SIZE = 64
#: the concepts in the order they are painted (the denoiser stores this order, ``concepts`` of its JSON)
CONCEPTS = ("night", "station", "rain", "bench", "umbrella", "documentary")
WIDTH = 768
MAX_LENGTH = 12
RECIPE_SEED = 20261129

#: the vocabulary's words in order: the pieces of the trace's prompt first
WORDS = (
    "雨夜 车站 ， 一把 留在 长椅 上的 红伞 纪实 摄影 。 "
    "雨 夜 夜晚 下雨 站台 站 车 椅子 椅 长 伞 雨伞 红 照片 上 的 在 一 把 留 晴天 白天 海边 城市 街道 猫 一只"
).split()
#: concept → the words that name it
NAMES = {
    "rain": "雨夜 雨 下雨",
    "night": "雨夜 夜 夜晚",
    "station": "车站 站台 站",
    "bench": "长椅 椅子 椅",
    "umbrella": "红伞 伞 雨伞",
    "documentary": "纪实 摄影 照片",
}
#: word → concepts it names; each word's concepts follow NAMES' order (雨夜: rain, then night)
LEXICON = {word: [concept for concept, named in NAMES.items() if word in named.split()] for word in WORDS}
assert {w for v in NAMES.values() for w in v.split()} <= set(WORDS), "every named word is in WORDS"

VAE_SCALING_FACTOR = 0.18215
#: (M / s) in diffusion-latent units: rows R, G, B; columns luminance, red–cyan, blue–yellow, light
VAE_MIXING_PER_LATENT = [[0.90, 0.80, -0.10, 0.60], [0.90, -0.40, -0.25, 0.50], [0.90, -0.20, 0.90, 0.30]]
VAE_BIAS = [0.0, 0.0, 0.0]

DENOISER_SCALARS = {
    "query_scale": 30.0,
    "gate_sharpness": 25.0,
    "gate_threshold": 0.35,
    "conditional_strength": 0.2,
    "texture_std": 0.12,
    "blur_max": 4.0,
}

SUBFIXTURE_2D = {
    "description": "The two-dimensional DDIM sub-fixture of §7.8 (sigma = 0, epsilon prediction).",
    "alpha_bar": {"2": 0.25, "1": 0.64, "0": 1.0},
    "z_2": [1.0, -1.0],
    "epsilon_2": [0.2, -0.1],
    "epsilon_1": [0.1, -0.2],
    "eta": 0.0,
    "tolerance": 1e-6,
    "source_says": {"x0_hat_2": [1.653590, -1.826795], "z_1": [1.442872, -1.521436], "x0_hat_1": [1.728590, -1.751795]},
}


def _paint(rgb, mask, colour):
    """rgb [3, H, W] ← mask·colour + (1 − mask)·rgb, mask ∈ [0, 1] of shape [H, W]."""
    colour = np.asarray(colour, dtype=np.float64)[:, None, None]
    return rgb * (1.0 - mask) + colour * mask


def _box(yy, xx, top, bottom, left, right, soft=0.6):
    """A soft-edged rectangle mask [H, W]."""

    def ramp(v):
        return np.clip(v / soft + 0.5, 0.0, 1.0)

    return ramp(yy - top) * ramp(bottom - yy) * ramp(xx - left) * ramp(right - xx)


def _disc(yy, xx, cy, cx, radius, soft=0.8):
    return np.clip((radius - np.hypot(yy - cy, xx - cx)) / soft + 0.5, 0.0, 1.0)


def paint_layers(rain_seed: int = 7) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """[(concept, rgb float64 [3, 64, 64] in [−1, 1], light float64 [64, 64])] after each layer."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64) + 0.5  # pixel centres
    layers = []
    # a neutral grey-blue start, replaced wholesale by the night layer
    rgb = np.zeros((3, SIZE, SIZE)) - 0.3
    light = np.zeros((SIZE, SIZE))

    # night: a dark sky fading to a faint city glow at the horizon; a dark wet platform below
    horizon = 34.0
    sky_t = np.clip(yy / horizon, 0.0, 1.0)
    sky = np.stack([-0.92 + 0.25 * sky_t, -0.88 + 0.25 * sky_t, -0.62 + 0.25 * sky_t])
    ground = np.stack([-0.78 + 0 * yy, -0.76 + 0 * yy, -0.66 + 0 * yy])
    below = (yy > horizon).astype(np.float64)
    rgb = sky * (1 - below) + ground * below
    layers.append(("night", rgb.copy(), light.copy()))

    # station: roof canopy, two pillars, platform edge with a yellow line, two hanging lamps
    rgb = _paint(rgb, _box(yy, xx, 0, 7, 0, 64), (-0.70, -0.70, -0.66))
    rgb = _paint(rgb, _box(yy, xx, 7, 8.5, 0, 64), (-0.35, -0.38, -0.40))
    for left in (5.0, 55.0):
        rgb = _paint(rgb, _box(yy, xx, 7, 48, left, left + 3.5), (-0.55, -0.56, -0.58))
    rgb = _paint(rgb, _box(yy, xx, 47.5, 49.0, 0, 64), (0.55, 0.40, -0.60))
    rgb = _paint(rgb, _box(yy, xx, 49.0, 64, 0, 64), (-0.86, -0.85, -0.80))
    for cx in (20.0, 44.0):
        rgb = _paint(rgb, _box(yy, xx, 8, 11.5, cx - 0.4, cx + 0.4), (-0.6, -0.6, -0.6))
        glow = np.exp(-((yy - 12.5) ** 2 + (xx - cx) ** 2) / (2 * 2.2**2))
        rgb = _paint(rgb, _disc(yy, xx, 12.5, cx, 1.6), (0.95, 0.80, 0.35))
        light = np.maximum(light, glow)
        # the lamp's smeared reflection on the wet platform
        streak = np.exp(-((xx - cx) ** 2) / (2 * 1.2**2)) * np.clip((yy - 35.0) / 12.0, 0, 1) * (yy < 47.5)
        rgb = _paint(rgb, 0.55 * streak, (0.55, 0.40, 0.05))
        light = np.maximum(light, 0.5 * streak)
    layers.append(("station", rgb.copy(), light.copy()))

    # rain: thin slanted streaks, brighter where the lamps light them
    rng = np.random.default_rng(rain_seed)
    streaks = np.zeros((SIZE, SIZE))
    for _ in range(48):
        x0, y0 = rng.uniform(-10, 64), rng.uniform(6, 60)
        length = rng.uniform(4, 9)
        for s in np.linspace(0.0, 1.0, 12):
            y, x = y0 + s * length, x0 + 0.35 * s * length
            iy, ix = int(y), int(x)
            if 0 <= iy < SIZE and 0 <= ix < SIZE:
                streaks[iy, ix] = 1.0
    strength = 0.35 + 0.35 * np.clip(light * 2, 0, 1)
    rgb = _paint(rgb, streaks * strength, (0.55, 0.62, 0.75))
    layers.append(("rain", rgb.copy(), light.copy()))

    # bench: a wooden seat and back rest on two legs, centre of the platform
    wood = (-0.15, -0.40, -0.62)
    rgb = _paint(rgb, _box(yy, xx, 33.0, 35.5, 14, 50), wood)
    rgb = _paint(rgb, _box(yy, xx, 38.5, 40.5, 13, 51), (-0.05, -0.32, -0.55))
    for left in (16.0, 46.0):
        rgb = _paint(rgb, _box(yy, xx, 40.5, 47.0, left, left + 1.6), (-0.75, -0.75, -0.75))
    rgb = _paint(rgb, _box(yy, xx, 35.5, 38.5, 15, 16.2), (-0.6, -0.6, -0.6))
    rgb = _paint(rgb, _box(yy, xx, 35.5, 38.5, 47.8, 49), (-0.6, -0.6, -0.6))
    layers.append(("bench", rgb.copy(), light.copy()))

    # umbrella: an open red canopy resting on the seat, its handle hooked over the edge
    cy, cx, radius = 38.5, 34.0, 7.5
    dome = _disc(yy, xx, cy, cx, radius) * (yy < cy)
    ribs = 0.25 * (np.abs(np.sin((xx - cx) / radius * 2.4)) < 0.15) * dome
    rgb = _paint(rgb, dome, (0.88, -0.80, -0.72))
    rgb = _paint(rgb, ribs, (0.45, -0.85, -0.80))
    rgb = _paint(rgb, _box(yy, xx, cy - 0.2, cy + 4.5, cx - 0.35, cx + 0.35), (-0.85, -0.85, -0.85))
    rgb = _paint(rgb, _box(yy, xx, cy + 4.0, cy + 5.0, cx - 1.8, cx + 0.3), (-0.85, -0.85, -0.85))
    # its red reflection on the wet floor
    reflection = 0.45 * _disc(yy, xx, 53.0, cx, 5.0) * np.clip((yy - 49) / 4, 0, 1)
    rgb = _paint(rgb, reflection, (0.55, -0.75, -0.70))
    layers.append(("umbrella", rgb.copy(), light.copy()))

    # documentary: muted colour and a vignette, as an unstaged photograph
    grey = rgb.mean(axis=0, keepdims=True)
    rgb = 0.8 * rgb + 0.2 * grey
    vignette = np.clip(1 - 0.35 * (((yy - 32) / 40) ** 2 + ((xx - 32) / 40) ** 2), 0.0, 1.0)
    rgb = (rgb + 1.0) * vignette - 1.0
    layers.append(("documentary", rgb.copy(), light.copy()))
    assert [name for name, _, _ in layers] == list(CONCEPTS)
    return [(name, np.clip(r, -0.97, 0.97), lt) for name, r, lt in layers]


#: the light channel's gain: latent channel 3 holds the light directly
LIGHT_GAIN = 1.5


def encode_rgb(vae: VAEDecoder, rgb, light) -> np.ndarray:
    """The exact inverse of ``vae.decode`` at latent resolution: rgb float [3, H, W] in (−1, 1),
    light float [H, W] → diffusion latent float64 [4, H, W]."""
    rgb = np.asarray(rgb, dtype=np.float64)
    light = np.asarray(light, dtype=np.float64)
    mixing = vae.mixing / vae.scaling_factor  # M·(z/s) = (M/s)·z
    target = np.arctanh(rgb) - vae.bias[:, None, None]  # (M/s)·z = atanh(x) − b
    z_light = LIGHT_GAIN * light  # channel 3 holds the light directly
    rest = target - mixing[:, 3][:, None, None] * z_light
    first3 = np.linalg.solve(mixing[:, :3], rest.reshape(3, -1)).reshape(rest.shape)
    return np.concatenate([first3, z_light[None]], axis=0)


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, WIDTH))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build_models(rng: np.random.Generator) -> dict[str, tuple[dict, dict | None]]:
    """Model ID → (its JSON meta, its arrays or None): the text encoder, the denoiser, the VAE."""
    queries = _unit(rng, len(CONCEPTS))
    vocab = ["<pad>", "<unk>", *LEXICON]
    noise = _unit(rng, len(vocab))
    embedding = np.zeros((len(vocab), WIDTH))
    for row, piece in enumerate(vocab):
        named = LEXICON.get(piece, [])
        if named:
            direction = sum(queries[CONCEPTS.index(c)] for c in named)
            embedding[row] = direction / np.linalg.norm(direction) + 0.25 * noise[row]
        else:
            embedding[row] = noise[row] * (0.3 if piece == "<pad>" else 1.0)
    positions = 0.1 * _unit(rng, MAX_LENGTH)
    text_arrays = {"token_embedding": embedding.astype(np.float32), "position_embedding": positions.astype(np.float32)}
    text_meta = {
        "text_encoder_id": TEXT_ENCODER_ID,
        "tokenizer_id": TOKENIZER_ID,
        "max_length": MAX_LENGTH,
        "width": WIDTH,
        "vocab": vocab,
        "lexicon": LEXICON,
    }

    mixing = np.array(VAE_MIXING_PER_LATENT) * VAE_SCALING_FACTOR
    vae_meta = {
        "vae_id": VAE_ID,
        "scaling_factor": VAE_SCALING_FACTOR,
        "mixing": mixing.round(10).tolist(),
        "bias": VAE_BIAS,
        "upsampling": "bilinear-8x",
    }
    vae = VAEDecoder(np.array(vae_meta["mixing"]), np.array(VAE_BIAS, dtype=np.float64), VAE_SCALING_FACTOR)

    latents = [encode_rgb(vae, rgb, light) for _, rgb, light in paint_layers()]
    full = latents[-1]
    blurred = gaussian_blur(full, 10.0)
    base = 0.5 * blurred + 0.5 * full.mean(axis=(1, 2), keepdims=True)  # the blurred average
    previous = [base, *latents[:-1]]
    deltas = np.stack([after - before for after, before in zip(latents, previous, strict=True)])
    denoiser_arrays = {
        "concept_queries": queries.astype(np.float32),
        "base": base.astype(np.float32),
        "deltas": deltas.astype(np.float32),
    }
    denoiser_meta = {"denoiser_id": DENOISER_ID, "concepts": list(CONCEPTS), "prediction_type": "epsilon"}
    return {
        TEXT_ENCODER_ID: (text_meta, text_arrays),
        DENOISER_ID: ({**denoiser_meta, **DENOISER_SCALARS}, denoiser_arrays),
        VAE_ID: (vae_meta, None),
    }


def build(dest: Path) -> list[str]:
    """Write trace two's fixtures under ``dest``; return their paths relative to ``dest``."""
    dest = Path(dest)
    folder = dest / "diffusion"
    written = []
    for model_id, (meta, arrays) in build_models(np.random.default_rng(RECIPE_SEED)).items():
        write_json(folder / f"{model_id}.json", meta)
        written.append(f"diffusion/{model_id}.json")
        if arrays is not None:
            save_arrays(folder / f"{model_id}.npz", arrays)
            written.append(f"diffusion/{model_id}.npz")
    write_json(folder / "ddim-2d-subfixture.json", SUBFIXTURE_2D)
    write_jsonl(run_diffusion(root=folder).events, dest / "traces" / "diffusion.jsonl")
    return [*written, "diffusion/ddim-2d-subfixture.json", "traces/diffusion.jsonl"]
