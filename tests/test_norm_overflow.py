"""RMSNorm of rows whose squares overflow their dtype: the norm, not zeros (issue 43: ``rms_norm`` on
large float32 values returned zeros), and the ordinary rows bit for bit as before."""

import numpy as np
import pytest

from labkit.nn import rms_norm


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("peak", [1e20, 3e38, 1e200])
def test_a_huge_row_is_normalised_not_zeroed(dtype, peak):
    if peak > float(np.finfo(dtype).max):
        pytest.skip("not representable in this dtype")
    x = np.array([[peak, -peak, 0.0, 0.0], [3.0, 4.0, 0.0, 0.0]], dtype=dtype)
    out = rms_norm(x, 1e-6)
    assert out.dtype == dtype and np.isfinite(out).all()
    np.testing.assert_allclose(out[0], [np.sqrt(2), -np.sqrt(2), 0, 0], rtol=1e-6)
    np.testing.assert_array_equal(out[1], rms_norm(x[1:], 1e-6)[0])  # the other row as before
    assert np.sqrt(np.mean(out[0].astype(np.float64) ** 2)) == pytest.approx(1.0, rel=1e-6)


def test_ordinary_rows_are_unchanged_bit_for_bit():
    x = np.random.default_rng(3).normal(size=(5, 8)).astype(np.float32)
    expected = x / np.sqrt((x * x).sum(axis=-1, keepdims=True) / 8 + np.float32(1e-6))
    np.testing.assert_array_equal(rms_norm(x, 1e-6), expected)
