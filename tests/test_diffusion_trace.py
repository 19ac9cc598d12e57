"""Trace two's reproduction assertions (§7.9), one test each, plus timing and the CLI."""

import numpy as np
import pytest
from _helpers import timed

from labkit.cli import main as labkit_main
from labkit.core.events import digest_bytes, read_jsonl
from labkit.core.fixtures import fixture_path
from labkit.diffusion import DiffusionConfig, philox4x32_10, run_diffusion
from labkit.diffusion.pipeline import load_models
from labkit.diffusion.vae import encode_png, to_uint8

LEVELS = {"latent", "pixel", "png"}


@pytest.fixture(scope="module")
def run():
    return run_diffusion()


@pytest.fixture(scope="module")
def timed_again():
    """A second, warm run of the default configuration and its wall time in seconds."""
    return timed(run_diffusion)


@pytest.fixture(scope="module")
def golden():
    return read_jsonl(fixture_path("traces", "diffusion.jsonl"))


def by_type(events, event_type):
    return [e for e in events if e["event_type"] == event_type]


def test_event_sequence_is_d00_to_d08_as_section_7_7(run):
    got = [(e["event_id"], e["event_type"]) for e in run.events]
    want = (
        [("d00", "condition.encoded"), ("d01", "latent.initialized")]
        + [(f"d0{i}", "denoise.updated") for i in range(2, 6)]
        + [("d06", "vae.decoded"), ("d07", "image.encoded"), ("d08", "response.completed")]
    )
    assert got == want


# §7.9 (1) text, negative prompt and encoder version give the same condition tensors
def test_assert1_same_text_negative_and_encoder_give_same_conditions(run, golden, timed_again):
    again = timed_again[0]
    assert np.array_equal(again.condition_batch, run.condition_batch), "two runs encoded different conditions"
    d00, g00 = run.events[0]["payload"], golden[0]["payload"]
    assert (
        d00["artifacts"]
        == g00["artifacts"]
        == {"text_encoder_id": "toy-text-encoder-v2", "tokenizer_id": "toy-text-tokenizer-v2"}
    )
    assert d00["input_ids"] == g00["input_ids"] and len(d00["input_ids"]) == 12
    assert d00["tensors"]["condition_batch"]["shape"] == [2, 12, 768]
    other = run_diffusion(DiffusionConfig(negative_prompt="模糊"))
    assert not np.array_equal(other.condition_batch[0], run.condition_batch[0]), (
        "another negative prompt must change c_neg"
    )


# §7.9 (2) seed, PRNG, normal transform, counter and latent shape are identical
def test_assert2_initial_latent_is_philox_box_muller_from_counter_0(run):
    d01 = run.events[1]["payload"]
    assert d01["seed"] == 314159 and d01["philox_key"] == ["0x0004cb2f", "0x00000000"]
    assert d01["artifacts"]["prng"] == "Philox4x32-10"
    assert d01["artifacts"]["normal_transform"] == "box-muller-v1"
    assert d01["rng"] == {"counter_before": 0, "counter_after": 4096}
    assert d01["latent_shape"] == [1, 4, 64, 64] and d01["latent_dtype"] == "float32"
    # recompute z_999 independently: counters 0…4095, u = (x + ½)/2³², Box–Muller pairs
    counters = np.zeros((4096, 4), dtype=np.uint32)
    counters[:, 0] = np.arange(4096)
    u = (philox4x32_10(counters, np.array([314159, 0], np.uint32)).astype(np.float64) + 0.5) / 2**32
    r = np.sqrt(-2 * np.log(u[:, [0, 2]]))
    theta = 2 * np.pi * u[:, [1, 3]]
    normals = np.stack(
        [
            r[:, 0] * np.cos(theta[:, 0]),
            r[:, 0] * np.sin(theta[:, 0]),
            r[:, 1] * np.cos(theta[:, 1]),
            r[:, 1] * np.sin(theta[:, 1]),
        ],
        axis=1,
    )
    want = normals.reshape(1, 4, 64, 64).astype(np.float32)
    z999 = run.latents[0][1]
    assert z999.dtype == np.float32
    assert np.array_equal(z999, want), f"z_999 differs by up to {np.max(np.abs(z999 - want)):.3g}"


# §7.9 (3) the CFG batch is negative, then positive
def test_assert3_cfg_batch_is_negative_then_positive(run):
    encoder, denoiser, _ = load_models()
    _, c_neg = encoder.encode("")
    _, c_pos = encoder.encode(run.config.prompt)
    assert np.array_equal(run.condition_batch[0], c_neg[0]), "row 0 of the CFG batch must be c_neg"
    assert np.array_equal(run.condition_batch[1], c_pos[0]), "row 1 of the CFG batch must be c_pos"
    assert run.events[0]["payload"]["cfg_batch_order"] == ["negative", "positive"]
    # the combination ε̂ = ε_neg + 5(ε_pos − ε_neg) at t = 999, recomputed from the two branches
    z = run.latents[0][1]
    eps = denoiser(np.concatenate([z, z]), np.array([999, 999]), np.concatenate([c_neg, c_pos]))
    want = eps[0:1] + np.float32(5.0) * (eps[1:2] - eps[0:1])
    gap = float(np.max(np.abs(run.epsilon_guided[0] - want)))
    assert gap == 0.0, f"guided epsilon at t=999 differs from eps_neg + 5(eps_pos - eps_neg) by {gap:.3g}"


# §7.9 (4) the timestep list is exactly [999, 749, 499, 249]
def test_assert4_timesteps_are_exactly_999_749_499_249(run):
    assert run.events[1]["payload"]["scheduler"]["timesteps"] == [999, 749, 499, 249]
    steps = by_type(run.events, "denoise.updated")
    assert [e["payload"]["timestep"] for e in steps] == [999, 749, 499, 249]
    assert [e["payload"]["prev_timestep"] for e in steps] == [749, 499, 249, None]
    assert steps[-1]["payload"]["alpha_bar_prev"] == 1.0
    assert [e["payload"]["step_id"] for e in steps] == ["step-1", "step-2", "step-3", "step-4"]


# §7.9 (5) every model output matches the latent's shape
def test_assert5_model_output_matches_latent_shape(run):
    for event in by_type(run.events, "denoise.updated"):
        tensors = event["payload"]["tensors"]
        assert tensors["latent_batch"]["shape"] == tensors["epsilon_batch"]["shape"] == [2, 4, 64, 64]
        assert tensors["epsilon_guided"]["shape"] == tensors["x0_hat"]["shape"] == [1, 4, 64, 64]
        assert event["payload"]["batch"]["timestep_batch"] == [event["payload"]["timestep"]] * 2
    assert all(z.shape == (1, 4, 64, 64) and z.dtype == np.float32 for _, z in run.latents)


# §7.9 (6) with eta = 0 the loop draws no further noise
def test_assert6_eta_zero_loop_leaves_rng_counter_unchanged(run):
    counters = [
        (e["payload"]["rng"]["counter_before"], e["payload"]["rng"]["counter_after"])
        for e in by_type(run.events, "denoise.updated")
    ]
    assert counters == [(4096, 4096)] * 4, f"rng counters in the loop: {counters}"
    noisy = run_diffusion(DiffusionConfig(eta=1.0))
    moved = [e["payload"]["rng"]["counter_after"] for e in by_type(noisy.events, "denoise.updated")]
    assert moved == [8192, 12288, 16384, 16384], f"with eta=1 the counter must move: {moved}"


# §7.9 (7) VAE scaling, decoder and pixel post-processing are fixed
def test_assert7_vae_scaling_decoder_and_postprocess_are_fixed(run, golden):
    d06, d07 = run.events[6]["payload"], run.events[7]["payload"]
    assert d06["artifacts"] == {"vae_id": "toy-vae-v1"}
    assert d06["latent_scaling"] == {"factor": 0.18215, "applied": True}
    assert d06["tensors"]["pixels"]["shape"] == [1, 3, 512, 512]
    assert d07["postprocess"] == golden[7]["payload"]["postprocess"]
    _, _, vae = load_models()
    image = to_uint8(vae.decode(run.latents[-1][1]))
    assert np.array_equal(image, run.image), "re-decoding z_0 must give the same uint8 pixels"
    assert d07["tensors"]["image_uint8"]["digest"] == golden[7]["payload"]["tensors"]["image_uint8"]["digest"]
    assert encode_png(image) == run.png, "the PNG settings must make the bytes a function of the pixels"
    washed = vae.decode(run.latents[-1][1], apply_scaling=False)
    assert np.std(washed) < 0.5 * np.std(run.pixels), "without the scaling factor the image must wash out"


# §7.9 (8) every comparison has an explicit level: latent, pixel or PNG bytes
def test_assert8_every_tensor_declares_its_comparison_level(run):
    seen = set()
    for event in run.events:
        for name, tensor in event["payload"].get("tensors", {}).items():
            assert tensor.get("level") in LEVELS, (
                f"{event['event_id']} tensor {name!r} has level {tensor.get('level')!r}"
            )
            seen.add(tensor["level"])
    assert seen == LEVELS
    png = run.events[7]["payload"]["tensors"]["png"]
    assert png["digest"] == digest_bytes(run.png) == run.events[8]["payload"]["commit"]["digest"]


def test_rng_counter_on_every_event_that_could_draw(run):
    drawing = [e for e in run.events if e["event_type"] in ("latent.initialized", "denoise.updated")]
    assert all(set(e["payload"]["rng"]) == {"counter_before", "counter_after"} for e in drawing)


def test_previews_are_replace_frames_with_step_ids(run):
    for event in by_type(run.events, "denoise.updated"):
        preview = event["payload"]["preview"]
        assert preview["mode"] == "replace-frame" and preview["step_id"] == event["payload"]["step_id"]


def test_png_is_deterministic_and_has_no_metadata_chunks(run):
    chunks, at = [], 8
    data = run.png
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        chunks.append(data[at + 4 : at + 8].decode("ascii"))
        at += 12 + length
    assert set(chunks) == {"IHDR", "IDAT", "IEND"}, f"unexpected PNG chunks {chunks}"


def test_guidance_visibly_matters(run):
    plain = run_diffusion(DiffusionConfig(guidance_scale=0.0))
    red = lambda img: float(np.mean(img[..., 0].astype(int) - img[..., 1].astype(int)))  # noqa: E731
    # the umbrella region (latent rows 31–38, columns 27–41 → pixels ×8)
    region = (slice(31 * 8, 38 * 8), slice(27 * 8, 41 * 8))
    assert red(run.image[region]) > 100 > red(plain.image[region]) + 60, (
        f"red − green in the umbrella region: guidance 5 → {red(run.image[region]):.1f}, "
        f"guidance 0 → {red(plain.image[region]):.1f}"
    )


def test_cli_writes_trace_and_png(tmp_path, capsys, golden):
    out, png = tmp_path / "d.jsonl", tmp_path / "d.png"
    assert labkit_main(["trace", "diffusion", "--out", str(out), "--png", str(png)]) == 0
    assert read_jsonl(out) == golden
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "d05 denoise.updated" in capsys.readouterr().out


def test_cli_rejects_unknown_fault(capsys):
    assert labkit_main(["trace", "diffusion", "--fault", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown diffusion fault 'nope'" in err and "png_timestamp" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"timestep_spacing": "middle"}, "timestep_spacing must be one of"),
        ({"guidance_scale": -1.0}, "guidance_scale must be a number >= 0"),
        ({"cfg_order": ("negative", "negative")}, "cfg_order must be a permutation"),
        ({"seed": -3}, "seed must be an integer"),
    ],
)
def test_config_errors_name_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        DiffusionConfig(**changes)


def test_the_fixtures_models_are_constants_not_settings():
    config = DiffusionConfig()
    assert (config.vae_id, config.sampler, config.latent_shape) == ("toy-vae-v1", "ddim-v1", (1, 4, 64, 64))
    with pytest.raises(ValueError, match="has no field 'vae_id'"):
        config.replace(vae_id="sd-vae")
    with pytest.raises(TypeError):
        DiffusionConfig(vae_id="sd-vae")


def test_cli_fault_is_a_changed_configuration(tmp_path, capsys):
    out = tmp_path / "seed.jsonl"
    assert labkit_main(["trace", "diffusion", "--fault", "other_seed", "--out", str(out)]) == 0
    d01 = read_jsonl(out)[1]["payload"]
    assert d01["seed"] == 314160 and d01["philox_key"] == ["0x0004cb30", "0x00000000"]
    assert "fault other_seed" in capsys.readouterr().out
    assert labkit_main(["trace", "diffusion", "--list-faults"]) == 0
    listing = capsys.readouterr().out
    assert all(
        name in listing
        for name in (
            "cfg_order_swapped",
            "leading_timesteps",
            "eta_positive",
            "other_seed",
            "counter_offset",
            "vae_scaling_omitted",
        )
    )
