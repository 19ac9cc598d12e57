"""The transformer's shortcuts compute exactly what the plain paths compute: RoPE angles shared
across heads and layers; lab decoders share one read-only draw of their weights; the kernels skip the checks the
decoder has made once a pass, and the decoder still refuses what those checks refused."""

import numpy as np
import pytest

from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_weights
from labkit.nn import Decoder, KVCache, attention, rms_norm, rope
from labkit.nn.rope import rope_angles


def test_rope_with_precomputed_angles_equals_rope_computing_them():
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        x = rng.normal(size=(2, 3, 6, 8)).astype(dtype)
        positions = np.array([0, 4, 5, 9, 10, 300])
        plain = rope(x, positions)
        shared = rope(x, positions, angles=rope_angles(positions, 8, 10000.0, dtype))
        assert shared.dtype == plain.dtype == dtype
        gap = float(np.max(np.abs(shared.astype(np.float64) - plain.astype(np.float64))))
        assert np.array_equal(shared, plain), f"{dtype.__name__}: shared angles differ by up to {gap}"
    with pytest.raises(ValueError, match=r"angles must be \[T, d_h/2\] = \[6, 4\]"):
        rope(x, positions, angles=rope_angles(positions[:5], 8))


def test_lab_decoders_share_read_only_weights_but_not_their_containers():
    a, b = lab_decoder(), lab_decoder("reset_rope_position")
    assert a.weights.layers[0]["q"] is b.weights.layers[0]["q"], "one draw per seed"
    assert a.weights.layers is not b.weights.layers, "each decoder has its own containers"
    with pytest.raises(ValueError, match="read-only"):
        a.weights.layers[0]["q"][0, 0] = 1.0
    a.weights.layers[0]["q"] = np.zeros((8, 8))  # swapping an array stays local
    assert not np.array_equal(lab_decoder().weights.layers[0]["q"], np.zeros((8, 8)))


def test_a_swapped_in_bad_array_is_still_checked():
    weights = lab_weights()
    weights.layers[1]["up"] = np.full((8, 12), np.nan)
    with pytest.raises(ValueError, match=r"weight 'layers.1.up' of lab-decoder contains NaN"):
        Decoder(LAB_CONFIG, weights)
    weights = lab_weights()
    weights.layers[0]["down"] = np.zeros((8, 12))
    with pytest.raises(ValueError, match=r"weight 'layers.0.down' of lab-decoder must have shape \[12, 8\]"):
        Decoder(LAB_CONFIG, weights)


def test_the_kernels_on_checked_arguments_compute_what_the_checking_kernels_compute():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1, 2, 5, 4))
    positions = np.arange(5)
    allowed = np.tril(np.ones((5, 5), dtype=bool))
    angles = rope_angles(positions, 4)
    assert np.array_equal(rms_norm(x, 1e-6, checked=True), rms_norm(x, 1e-6))
    assert np.array_equal(rope(x, positions, angles=angles, checked=True), rope(x, positions))
    for fast, plain in zip(attention(x, x, x, allowed, checked=True), attention(x, x, x, allowed), strict=True):
        assert np.array_equal(fast, plain)


def test_the_decoder_checks_what_its_kernels_no_longer_check_once_a_pass():
    model = lab_decoder()
    ids = np.array([[1, 5, 3]])
    with pytest.raises(ValueError, match=r"rope_positions must be \[T\] with T=3, got shape \[2\]"):
        model.forward(ids, rope_positions=np.arange(2))
    with pytest.raises(ValueError, match=r"allowed must be \[Tq, Tk\] = \[3, 3\], got \[3, 2\]"):
        model.forward(ids, allowed=np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="row 2 has none"):
        model.forward(ids, allowed=np.triu(np.ones((3, 3), dtype=bool), k=1))
    with pytest.raises(ValueError, match="positions must be finite"):
        model.forward(ids, rope_positions=np.array([0.0, np.nan, 2.0]))


def test_an_overflowing_pass_is_refused_not_returned():
    weights = lab_weights()
    weights.output = np.full((8, 17), 1e308)  # finite, but a sum of eight such products is not
    with np.errstate(over="ignore"), pytest.raises(ValueError, match=r"lab-decoder: the forward pass overflowed"):
        Decoder(LAB_CONFIG, weights).full_logits(np.array([[1, 2]]))


def test_a_cache_append_of_known_finite_keys_still_checks_the_layer_and_the_shapes():
    cache = KVCache(2)
    keys = np.zeros((1, 2, 1, 4))
    cache.append(0, keys, keys, finite=True)
    with pytest.raises(ValueError, match=r"k_new must extend layer 0's"):
        cache.append(0, np.zeros((1, 3, 1, 4)), np.zeros((1, 3, 1, 4)), finite=True)
    with pytest.raises(ValueError, match=r"layer must be an integer in \[0, 1\]"):
        cache.append(2, keys, keys, finite=True)
    with pytest.raises(ValueError, match="k_new must hold finite values"):
        cache.append(1, np.full((1, 2, 1, 4), np.nan), keys)
