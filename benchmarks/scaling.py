"""Scaling: one decode step with the KV cache vs a full recompute, as the context grows.

On the lab decoder (``labkit.labs.lab_decoder``: 2 layers, 2 heads × 4, width 8, V = 17,
float64) we feed random token IDs < V (the figures of growth need no meaning) and, for each
context length T:

    cached:     the cache holds T − 1 positions; time ``decode_step`` of token T
                (projections of one token + attention of 1 query over T keys + the cache append);
    recompute:  no cache; time ``full_logits`` of all T tokens (what producing token T costs
                when nothing is kept: every position's projections and a T×T score matrix).

Both give the logits of position T − 1; ``decoder_scaling`` checks that they agree
(max |Δ| ≤ 1e-10), so the two timed paths are known to do the same job.
"""

from __future__ import annotations

import numpy as np

from benchmarks.fit import describe_growth
from benchmarks.stats import scaled, summarize, time_call

DEFAULT_CONTEXTS = (16, 32, 64, 128, 256, 512, 1024, 2048)
AGREEMENT_TOLERANCE = 1e-10


def check_contexts(contexts) -> list[int]:
    """Sorted distinct context lengths, each an integer ≥ 2 (a cache needs one earlier token)."""
    values = list(contexts)
    if len(values) < 2:
        raise ValueError(f"contexts must hold at least two lengths to fit, got {values!r}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 2:
            raise ValueError(f"every context length must be an integer ≥ 2, got {value!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"context lengths must be distinct, got {values!r}")
    return sorted(int(v) for v in values)


def _time_cached(model, ids: np.ndarray, repeats: int) -> tuple[dict, np.ndarray]:
    """Prefill ids[:, :T−1] once; time the decode step of ids[:, T−1] on a fresh copy each run."""
    from labkit.nn import KVCache

    _, base = model.prefill(ids[:, :-1], KVCache(model.config.n_layers))
    samples, logits = [], None
    import time

    for _ in range(repeats + 1):  # the first run is a warm-up
        cache = base.copy()
        start = time.perf_counter()
        result = model.decode_step(ids[:, -1], cache)
        samples.append(time.perf_counter() - start)
        logits = result.next_logits
    return summarize(samples[1:]), logits


def unavailable(reason: str) -> dict:
    return {
        "available": False,
        "reason": reason,
        "model": None,
        "contexts": [],
        "cached_ms": [],
        "recompute_ms": [],
        "speedup": [],
        "max_abs_logit_gap": None,
        "fits": None,
    }


def decoder_scaling(contexts=DEFAULT_CONTEXTS, repeats: int = 5, seed: int = 0) -> dict:
    """Per-token decode time (ms) with the cache and by full recompute, for each context length.

    Returns {"model", "contexts", "cached_ms", "recompute_ms", "speedup", "max_abs_logit_gap",
    "fits": {"cached": …, "recompute": …}} with one summary per context in each list.
    """
    from labkit.labs.lab_decoder import LAB_CONFIG, lab_decoder

    lengths = check_contexts(contexts)
    model = lab_decoder()
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, LAB_CONFIG.vocab_size, size=(1, lengths[-1]), dtype=np.int64)
    cached, recompute, gaps = [], [], []
    for t in lengths:
        prefix = ids[:, :t]
        c_stat, c_logits = _time_cached(model, prefix, repeats)
        r_stat, full = time_call(lambda p=prefix: model.full_logits(p), repeats=repeats, warmup=1)
        gap = float(np.max(np.abs(full[:, -1, :] - c_logits)))
        if not gap <= AGREEMENT_TOLERANCE:
            raise AssertionError(
                f"cached and recomputed logits at T={t} differ by {gap:.3e} "
                f"(> {AGREEMENT_TOLERANCE:g}): the two timed paths disagree"
            )
        cached.append(scaled(c_stat, 1000.0))
        recompute.append(scaled(r_stat, 1000.0))
        gaps.append(gap)
    medians_c = [s["median"] for s in cached]
    medians_r = [s["median"] for s in recompute]
    return {
        "available": True,
        "reason": None,
        "model": f"{LAB_CONFIG.model_id}: {LAB_CONFIG.n_layers} layers, {LAB_CONFIG.n_q_heads} heads × "
        f"{LAB_CONFIG.head_dim}, width {LAB_CONFIG.width}, V={LAB_CONFIG.vocab_size}, {LAB_CONFIG.dtype}",
        "contexts": lengths,
        "cached_ms": cached,
        "recompute_ms": recompute,
        "speedup": [r / c for r, c in zip(medians_r, medians_c, strict=True)],
        "max_abs_logit_gap": max(gaps),
        "fits": {"cached": describe_growth(lengths, medians_c), "recompute": describe_growth(lengths, medians_r)},
    }
