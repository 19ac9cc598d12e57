"""The three toy models of trace two: tokenizer and text encoder, denoiser, VAE."""

import numpy as np
import pytest

from labkit.diffusion.config import PROMPT
from labkit.diffusion.pipeline import load_models
from labkit.diffusion.vae import bilinear_matrix, encode_png, to_uint8


@pytest.fixture(scope="module")
def models():
    return load_models()


def test_prompt_becomes_twelve_ids(models):
    encoder = models[0]
    pieces = encoder.tokenizer.pieces(PROMPT)
    assert pieces == ["雨夜", "车站", "，", "一把", "留在", "长椅", "上的", "红伞", "，", "纪实", "摄影", "。"]
    ids = encoder.tokenizer.encode(PROMPT)
    assert ids.shape == (12,) and 0 not in ids.tolist(), f"ids {ids.tolist()}"
    assert [encoder.tokenizer.vocab[i] for i in ids] == pieces


def test_empty_negative_prompt_is_padded_to_twelve(models):
    assert models[0].tokenizer.encode("").tolist() == [0] * 12


def test_unknown_characters_and_overlong_prompts(models):
    tokenizer = models[0].tokenizer
    assert tokenizer.pieces("雨夜☂") == ["雨夜", "<unk>"]
    with pytest.raises(ValueError, match="holds at most 12"):
        tokenizer.encode("雨" * 13)


def test_encoder_gives_768_wide_rms_normalised_embeddings(models):
    ids, c = models[0].encode(PROMPT)
    assert ids.shape == (1, 12) and c.shape == (1, 12, 768) and c.dtype == np.float32
    rms = np.sqrt(np.mean(c.astype(np.float64) ** 2, axis=-1))
    # RMSNorm's eps = 1e-6 beside a mean square of about 1/768 pulls the RMS just below 1
    assert np.allclose(rms, 1.0, atol=1e-3), f"token RMS {rms.min():.6f}…{rms.max():.6f}"
    with pytest.raises(ValueError, match=r"ids must have shape \[B, 12\]"):
        models[0].encode_ids(np.zeros((1, 5), dtype=np.int64))


def test_denoiser_gates_read_the_prompt(models):
    encoder, denoiser, _ = models
    gates_pos = denoiser.gates(encoder.encode(PROMPT)[1][0])
    gates_neg = denoiser.gates(encoder.encode("")[1][0])
    gates_cat = denoiser.gates(encoder.encode("晴天一只猫")[1][0])
    assert gates_pos.min() > 0.99, f"the prompt names all six concepts: {gates_pos.round(4).tolist()}"
    assert gates_neg.max() < 0.01, f"the empty prompt names none: {gates_neg.round(4).tolist()}"
    assert gates_cat.max() < 0.01, f"'晴天一只猫' names none: {gates_cat.round(4).tolist()}"
    station_only = denoiser.gates(encoder.encode("车站")[1][0])
    named = dict(zip(denoiser.params.concepts, station_only.round(3).tolist(), strict=True))
    assert named["station"] > 0.99 and max(v for k, v in named.items() if k != "station") < 0.01, named


def test_denoiser_shapes_and_errors(models):
    _, denoiser, _ = models
    z = np.zeros((2, 4, 64, 64), dtype=np.float32)
    c = np.zeros((2, 12, 768), dtype=np.float32)
    eps = denoiser(z, np.array([999, 999]), c + 1.0)
    assert eps.shape == (2, 4, 64, 64) and eps.dtype == np.float32
    with pytest.raises(ValueError, match=r"timestep_batch must be integers of shape \[2\]"):
        denoiser(z, np.array([999]), c)
    with pytest.raises(ValueError, match=r"timestep_batch must lie in \[0, 999\]"):
        denoiser(z, np.array([1000, 1000]), c)
    with pytest.raises(ValueError, match="latent_batch must be"):
        denoiser(z[:, :3], np.array([999, 999]), c)


def test_epsilon_is_consistent_with_its_x0_prediction(models):
    _, denoiser, _ = models
    rng = np.random.default_rng(0)
    z = rng.standard_normal((1, 4, 64, 64)).astype(np.float32)
    gates = np.ones(6)
    c = np.zeros((1, 12, 768), dtype=np.float32)
    c[0, :, :] = denoiser.concept_queries[0] * np.sqrt(768)  # names 'night' only (other gates ≈ 0)
    t = 499
    a = float(denoiser.schedule[t])
    x0 = denoiser.predict_x0(z[0], t, denoiser.gates(c[0]))
    eps = denoiser(z, np.array([t]), c)[0].astype(np.float64)
    back = (z[0] - np.sqrt(1 - a) * eps) / np.sqrt(a)
    assert np.max(np.abs(back - x0)) < 1e-4, f"x0 from epsilon differs by {np.max(np.abs(back - x0)):.2e}"
    assert gates.shape == (6,)


def test_vae_decodes_to_512_and_inverts_its_encoder(models):
    _, denoiser, vae = models
    full = denoiser.base.astype(np.float64) + denoiser.deltas.astype(np.float64).sum(axis=0)
    pixels = vae.decode(full[None].astype(np.float32))
    assert pixels.shape == (1, 3, 512, 512) and pixels.dtype == np.float32
    assert -1 < pixels.min() and pixels.max() < 1
    # bilinear upsampling of a constant is the constant
    assert np.allclose(bilinear_matrix(64, 8).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match=r"latent must have shape \[1, 4, H, W\]"):
        vae.decode(np.zeros((4, 64, 64)))


def test_png_bytes_depend_on_pixels_only():
    image = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    assert encode_png(image) == encode_png(image.copy())
    assert encode_png(image) != encode_png(image, {"Creation Time": "2026"})
    with pytest.raises(ValueError, match=r"image must be uint8 \[H, W, 3\]"):
        encode_png(image.astype(np.float32))
    assert to_uint8(np.full((1, 3, 2, 2), -1.0)).max() == 0
    assert to_uint8(np.full((1, 3, 2, 2), 1.0)).min() == 255


def test_fixture_weights_stay_small():
    from labkit.core.fixtures import fixtures_root

    total = sum(p.stat().st_size for p in (fixtures_root() / "diffusion").iterdir())
    assert total < 2_000_000, f"fixtures/diffusion holds {total / 1e6:.2f} MB (budget: a few MB)"


def test_importing_the_diffusion_package_stays_cheap():
    import subprocess
    import sys

    code = (
        "import sys, labkit.diffusion, labkit.diffusion.faults; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'PIL') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"import labkit.diffusion pulled in {out.strip()}"


def test_the_shared_models_cannot_be_edited_in_place(models):
    encoder, denoiser, vae = models
    for array in (encoder.token_embedding, denoiser.deltas, vae.mixing):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0.0
    assert load_models() is models  # the same objects every run of the session uses
