"""One forward pass over a ragged batch: every scheduled request's chunk, flattened into one sequence.

The book's decoder run as a serving engine runs it: all chunks' tokens are one ``[1, N, d]`` stream, so
every projection and the SwiGLU are *one* matrix product, while attention stays per request, over its keys
read through its block table, causal at its own positions.  Attention, softmax and RMSNorm reduce in the
same order whatever the batch; a GEMM over another N may sum a row in another order, moving a float32
logit in its last bits (~1e-6), never enough to flip this model's argmax (margins ≥ 0.03).  Real engines
add split-K attention whose split depends on the batch; a batch-invariant engine fixes every reduction
order and pays in throughput (He et al., Thinking Machines 2025).
"""

from dataclasses import dataclass

import numpy as np

from labkit.nn import Decoder
from labkit.nn.attention import attention, causal_allowed
from labkit.nn.norm import rms_norm
from labkit.nn.rope import rope, rope_angles
from labkit.nn.transformer import ForwardResult, LayerRecord, per_query_head
from labkit.serving.paged import BlockPool


@dataclass(frozen=True)
class Chunk:
    """``ids`` [n] of one request fed at positions start … start + n − 1, through ``table``."""

    ids: list[int]
    start: int
    table: list[int]


def forward_batch(decoder: Decoder, pool: BlockPool, chunks: list[Chunk]) -> list[ForwardResult]:
    """Feed every chunk in one pass; write their K, V into ``pool``; one ``ForwardResult`` per chunk
    (logits [1, n, V], positions [n], per-layer shapes as the solo decoder records them)."""
    cfg, w = decoder.config, decoder.weights
    ends = np.cumsum([len(c.ids) for c in chunks])
    spans = list(zip(ends - [len(c.ids) for c in chunks], ends, strict=True))  # rows [a, b) of each chunk
    x = w.embedding[np.concatenate([c.ids for c in chunks])][None]  # [1, N, d]
    records: list[list[LayerRecord]] = [[] for _ in chunks]
    for i, layer in enumerate(w.layers):
        z = rms_norm(x, cfg.norm_eps, checked=True)
        q_all, k_all, v_all = z @ layer["q"], z @ layer["k"], z @ layer["v"]  # one GEMM each for all N rows
        attended = []
        for c, (a, b), rec in zip(chunks, spans, records, strict=True):
            out, shapes = _attend(decoder, pool, c, i, q_all[:, a:b], k_all[:, a:b], v_all[:, a:b])
            attended.append(out)
            rec.append(LayerRecord(i, [1, b - a, cfg.width], *shapes))
        x = x + np.concatenate(attended, axis=1) @ layer["o"]  # [1, N, d]
        z = rms_norm(x, cfg.norm_eps, checked=True)
        gate = z @ layer["gate"]
        x = x + ((gate / (1 + np.exp(-gate))) * (z @ layer["up"])) @ layer["down"]  # SwiGLU over all rows
        for (a, b), rec in zip(spans, records, strict=True):
            rec[-1].residual_out = [1, b - a, cfg.width]
    logits = rms_norm(x, cfg.norm_eps, checked=True) @ w.output  # [1, N, V]
    return [
        ForwardResult(logits[:, a:b], c.start + np.arange(b - a), rec, [1, b - a, cfg.width])
        for c, (a, b), rec in zip(chunks, spans, records, strict=True)
    ]


def _attend(decoder: Decoder, pool: BlockPool, chunk: Chunk, layer: int, q, k, v):
    """One request's attention in layer ``layer``: RoPE at its positions, K/V written to its blocks,
    all its keys gathered back.  q, k, v: [1, n, H·d_h] → (output [1, n, H_q·d_h], shapes)."""
    cfg = decoder.config
    n, start = q.shape[1], chunk.start
    positions = start + np.arange(n)
    angles = rope_angles(positions, cfg.head_dim, cfg.rope_base, decoder.dtype)
    q = rope(decoder._split_heads(q, cfg.n_q_heads), positions, angles=angles, checked=True)  # [1, H_q, n, d_h]
    k = rope(decoder._split_heads(k, cfg.n_kv_heads), positions, angles=angles, checked=True)  # [1, H_kv, n, d_h]
    v = decoder._split_heads(v, cfg.n_kv_heads)
    pool.write(chunk.table, layer, start, k, v)
    keys, values = pool.gather(chunk.table, layer, start + n)  # [1, H_kv, start + n, d_h]
    keys_per_q, values_per_q = per_query_head(keys, values, cfg.group_size)  # query head h reads h // group
    out, weights = attention(q, keys_per_q, values_per_q, causal_allowed(positions, np.arange(start + n)), checked=True)
    shapes = [list(a.shape) for a in (q, k, v, weights)] + [None, list(keys.shape), list(values.shape)]
    return decoder._merge_heads(out), shapes
