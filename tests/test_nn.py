"""The book's one transformer: cache equivalence, GQA, shapes from tensors, faults and errors."""

import numpy as np
import pytest

from labkit.nn import Decoder, DecoderConfig, DecoderFaults, DecoderWeights, KVCache, attention, causal_allowed, rope


def random_decoder(dtype="float64", n_q=2, n_kv=1, seed=0, faults=None):
    cfg = DecoderConfig(
        "test", vocab_size=11, width=8, n_layers=2, n_q_heads=n_q, n_kv_heads=n_kv, head_dim=4, ffn_width=6, dtype=dtype
    )
    rng = np.random.default_rng(seed)
    arrays = {name: rng.normal(scale=0.3, size=shape) for name, shape in cfg.weight_shapes().items()}
    return Decoder(cfg, DecoderWeights.from_arrays(arrays, cfg), faults)


@pytest.mark.parametrize(("dtype", "tol"), [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize(("n_q", "n_kv"), [(2, 2), (2, 1)])
def test_cached_logits_equal_full_recompute(dtype, tol, n_q, n_kv):
    model = random_decoder(dtype, n_q, n_kv)
    ids = np.array([[3, 1, 4, 1, 5, 9, 2, 6]])
    full = model.full_logits(ids)
    result, cache = model.prefill(ids[:, :5])
    steps = [result.next_logits] + [model.decode_step(ids[:, t], cache).next_logits for t in range(5, 8)]
    cached = np.stack(steps, axis=1)  # positions 4, 5, 6 and 7: the last step too
    assert cached.shape == full[:, 4:8].shape
    gaps = np.max(np.abs(cached - full[:, 4:8]), axis=(0, 2))
    assert gaps.max() <= tol, (
        f"cached vs full recompute differ by {gaps.max():.3g} (> {tol}) at position {4 + gaps.argmax()}"
    )
    assert cache.length == 8 and full.dtype == np.dtype(dtype)


def test_shape_ledger_is_read_off_the_tensors():
    model = random_decoder(n_q=2, n_kv=1)
    result, cache = model.prefill(np.arange(5)[None, :])
    ledger = result.layers[0].ledger()
    assert ledger["Q"] == [1, 2, 5, 4] and ledger["K"] == [1, 1, 5, 4] and ledger["V"] == [1, 1, 5, 4]
    assert ledger["score"] == [1, 2, 5, 5] and ledger["residual_out"] == [1, 5, 8]
    step = model.decode_step([3], cache)
    assert step.layers[1].ledger()["score"] == [1, 2, 1, 6]
    assert step.layers[1].ledger()["cache_K"] == [1, 1, 6, 4]
    assert [int(p) for p in step.positions] == [5]


def test_changing_future_tokens_leaves_earlier_logits_exactly_equal():
    model = random_decoder()
    a = model.full_logits(np.array([[1, 2, 3, 4, 5]]))
    b = model.full_logits(np.array([[1, 2, 3, 9, 10]]))
    assert np.array_equal(a[:, :3], b[:, :3])


@pytest.mark.parametrize("fault", ["reset_rope_position", "copy_layer0_cache_to_layer1", "top_left_rectangular_mask"])
def test_each_decode_fault_keeps_shapes_but_breaks_logits(fault):
    ids = np.array([[1, 5, 3, 8, 2, 9, 4]])
    reference = random_decoder().full_logits(ids)[0]
    model = random_decoder(faults=DecoderFaults.named(fault))
    cache = KVCache(2)
    got = np.stack([model.decode_step(ids[:, t], cache).next_logits[0] for t in range(7)])
    assert cache.shapes()[1]["K"] == [1, 1, 7, 4]
    assert np.max(np.abs(got - reference)) > 1e-3


def test_rope_rotates_pairs_and_preserves_norm():
    x = np.arange(1, 9, dtype=np.float64).reshape(1, 2, 4)
    out = rope(x, np.array([0, 3]))
    assert np.array_equal(out[:, 0], x[:, 0])
    assert np.allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1))
    # by hand: pair i = (x[2i], x[2i+1]) as the complex number x[2i] + j·x[2i+1], turned by 3 · 10000^(−2i/4)
    pairs = x[0, 1, 0::2] + 1j * x[0, 1, 1::2]
    turned = pairs * np.exp(1j * 3 * 10000.0 ** (-np.arange(2) * 2 / 4))
    expected = np.stack([turned.real, turned.imag], axis=-1).reshape(4)
    assert np.allclose(out[0, 1], expected, atol=1e-12), (out[0, 1], expected)
    with pytest.raises(ValueError, match="positions must be"):
        rope(x, np.array([0]))


def test_attention_refuses_a_row_with_no_allowed_key():
    q = np.ones((1, 2, 2))
    allowed = np.array([[True, False], [False, False]])
    with pytest.raises(ValueError, match="row 1 has none"):
        attention(q, q, q, allowed)
    _, w = attention(q, q, q, causal_allowed(np.arange(2), np.arange(2)))
    assert w[0, 0, 1] == 0.0


def test_bad_configuration_and_weights_are_named():
    with pytest.raises(ValueError, match="n_q_heads .3. must be a multiple of n_kv_heads .2."):
        DecoderConfig("x", 5, 8, 1, 3, 2, 4, 4)
    with pytest.raises(ValueError, match="head_dim must be even"):
        DecoderConfig("x", 5, 8, 1, 1, 1, 3, 4)
    cfg = DecoderConfig("x", 5, 8, 1, 2, 1, 4, 4)
    arrays = {n: np.zeros(s) for n, s in cfg.weight_shapes().items()}
    arrays["layers.0.q"] = np.zeros((8, 7))
    with pytest.raises(ValueError, match=r"'layers.0.q' of x must have shape \[8, 8\], got \[8, 7\]"):
        DecoderWeights.from_arrays(arrays, cfg)
    arrays["layers.0.q"] = np.full((8, 8), np.nan)
    with pytest.raises(ValueError, match="NaN"):
        DecoderWeights.from_arrays(arrays, cfg)
    with pytest.raises(ValueError, match="unknown decoder fault 'nope'"):
        DecoderFaults.named("nope")


def test_bad_input_ids_are_refused():
    model = random_decoder()
    with pytest.raises(ValueError, match=r"must lie in \[0, 11\), got 11"):
        model.full_logits(np.array([[1, 11]]))
    with pytest.raises(ValueError, match=r"\[B, T\]"):
        model.full_logits(np.array([1, 2]))


def test_truncated_cache_reuses_an_identical_prefix():
    model = random_decoder(dtype="float32")
    ids = np.array([[1, 2, 3, 4, 5, 6]])
    _, cache = model.prefill(ids[:, :4])
    reused = cache.truncated(3)
    result = model.forward(ids[:, 3:], reused)
    fresh = model.full_logits(ids)
    assert np.max(np.abs(result.logits - fresh[:, 3:])) < 1e-5
    with pytest.raises(ValueError, match="length must be in"):
        cache.truncated(9)
