"""Direct tests of the mechanisms a wrong line could break without changing a shape.

Each test pins one mechanism against an independent reference, so the mutant named in its docstring
fails here and not only, by chance, through a golden trace: the cache length over every layer,
grouped-query attention's head mapping, SwiGLU's gate and up.
"""

import numpy as np
import pytest

from labkit.nn import Decoder, DecoderConfig, DecoderWeights, KVCache


def _kv(length, heads=1, dim=4):
    return np.ones((1, heads, length, dim)), np.ones((1, heads, length, dim))


@pytest.mark.parametrize("lengths", [(3, 2), (2, 3), (0, 2), (2, 0)])
def test_the_cache_length_reads_every_layer(lengths):
    """Mutant: ``length`` returns layer 0's length only (a layer behind or ahead goes unnoticed)."""
    cache = KVCache(2)
    for layer, length in enumerate(lengths):
        if length:
            cache.append(layer, *_kv(length))
    with pytest.raises(RuntimeError, match=rf"different cache lengths: \[{min(lengths)}, {max(lengths)}\]"):
        _ = cache.length
    cache.append(lengths.index(min(lengths)), *_kv(abs(lengths[0] - lengths[1])))
    assert cache.length == max(lengths)


def _config(n_q, n_kv, n_layers=2):
    return DecoderConfig(
        "t",
        vocab_size=11,
        width=8,
        n_layers=n_layers,
        n_q_heads=n_q,
        n_kv_heads=n_kv,
        head_dim=4,
        ffn_width=6,
        dtype="float64",
    )


def test_grouped_query_attention_equals_multi_head_attention_with_each_kv_head_shared_by_its_group():
    """Query head h reads key/value head h // group_size.  The reference: a multi-head model whose
    head h has the key and value projections of the grouped model's head h // 2.  Mutant: h % n_kv."""
    gqa, mha = _config(4, 2), _config(4, 4)
    rng = np.random.default_rng(3)
    arrays = {name: rng.normal(scale=0.4, size=shape) for name, shape in gqa.weight_shapes().items()}
    wide = dict(arrays)
    for i in range(gqa.n_layers):
        for name in ("k", "v"):
            per_head = arrays[f"layers.{i}.{name}"].reshape(8, 2, 4)  # [d, H_kv, d_h]
            wide[f"layers.{i}.{name}"] = per_head[:, [h // 2 for h in range(4)], :].reshape(8, 16)
    ids = np.array([[3, 1, 4, 1, 5, 9]])
    grouped = Decoder(gqa, DecoderWeights.from_arrays(arrays, gqa)).full_logits(ids)
    reference = Decoder(mha, DecoderWeights.from_arrays(wide, mha)).full_logits(ids)
    gap = float(np.max(np.abs(grouped - reference)))
    assert gap < 1e-12, f"grouped-query logits differ from the shared-head reference by {gap:.3g}"


def _rms(x, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)


def test_the_feed_forward_is_silu_of_the_gate_times_the_up_projection():
    """x + (SiLU(z·W_gate) ⊙ z·W_up)·W_down, by hand, with attention silenced (W_o = 0) so the feed-forward
    is all a layer adds.  Mutant: SiLU(z·W_up) ⊙ z·W_gate."""
    cfg = _config(2, 1, n_layers=1)
    rng = np.random.default_rng(5)
    arrays = {name: rng.normal(scale=0.5, size=shape) for name, shape in cfg.weight_shapes().items()}
    arrays["layers.0.o"] = np.zeros_like(arrays["layers.0.o"])
    ids = np.array([[2, 7, 1]])
    x = arrays["embedding"][ids]
    z = _rms(x)
    gate, up = z @ arrays["layers.0.gate"], z @ arrays["layers.0.up"]
    x = x + (gate / (1 + np.exp(-gate)) * up) @ arrays["layers.0.down"]
    expected = _rms(x) @ arrays["output"]
    got = Decoder(cfg, DecoderWeights.from_arrays(arrays, cfg)).full_logits(ids)
    gap = float(np.max(np.abs(got - expected)))
    assert gap < 1e-12, f"the feed-forward differs from SiLU(gate) ⊙ up by {gap:.3g}"
