"""The transformer's shortcuts compute exactly what the plain paths compute: RoPE angles shared
across heads and layers; lab decoders share one read-only draw of their weights."""

import numpy as np
import pytest

from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder, lab_weights
from labkit.nn import Decoder, rope
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
