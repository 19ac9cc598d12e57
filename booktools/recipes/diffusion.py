"""Recipe of trace two's fixtures: the three toy models, the §7.8 sub-fixture, the golden trace.

Everything comes from fixed seeds and the procedural scene of ``labkit.diffusion.scene``; nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from booktools.recipes.files import save_arrays
from labkit.core.events import write_jsonl
from labkit.core.fixtures import write_json
from labkit.diffusion.denoiser import DENOISER_ID
from labkit.diffusion.pipeline import run_diffusion
from labkit.diffusion.scene import CONCEPTS, gaussian_blur, paint_layers
from labkit.diffusion.text_encoder import TEXT_ENCODER_ID, TOKENIZER_ID
from labkit.diffusion.vae import VAE_ID, VAEDecoder

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

    latents = [vae.encode_rgb(rgb, light) for _, rgb, light in paint_layers()]
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
