"""A plain, single-file NumPy script doing the work of ``labkit labs`` and ``labkit faults``.

It is the yardstick of the "labs vs a straightforward script" benchmark: no package, no
configuration objects, no event records, no argument checking beyond the CLI — just the
arithmetic of the twelve checks of chapter 11, written directly. It imports nothing from
``labkit`` and writes the same two report objects (same keys, same numbers up to rounding
noise in the last bits; ``benchmarks/labs_vs_baseline.py`` compares them).

    python benchmarks/baseline_labs.py labs   --output build/bench/labs.json [--samples N]
    python benchmarks/baseline_labs.py faults --output build/bench/faults.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

SHANGHAI = timezone(timedelta(hours=8))
LAB_IDS = [1, 5, 3, 8, 2, 9, 4]


# ----------------------------------------------------------------- small numeric pieces
def log_probs(z):
    """Row-wise log-softmax of z [N, V]."""
    top = z.max(axis=-1, keepdims=True)
    return z - top - np.log(np.sum(np.exp(z - top), axis=-1, keepdims=True))


def central_difference(f, x, h=1e-5):
    """∂f/∂x by (f(x + h·e_i) − f(x − h·e_i)) / 2h for every element i of x."""
    out = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        up = x.copy()
        down = x.copy()
        up[i] = up[i] + h
        down[i] = down[i] - h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


def ce_with_mask(z, target, keep):
    """Mean −log p(target) over kept rows of z [N, V]; gradient [N, V] (zero on dropped rows)."""
    n_kept = int(np.count_nonzero(keep))
    if n_kept == 0:
        raise ValueError("keep selects no row")
    rows = np.arange(z.shape[0])
    lp = log_probs(z)
    loss = -float(np.mean(lp[rows[keep], target[keep]]))
    g = np.exp(lp)
    g[rows, target] -= 1.0
    g = g * (keep.astype(float)[:, None] / n_kept)
    return loss, g


def stable_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def masked_attention(q, k, v, ok):
    """q [H, Tq, D], k and v [H, Tk, D], ok [Tq, Tk] → (output [H, Tq, D], weights [H, Tq, Tk])."""
    if not ok.any(axis=1).all():
        raise ValueError("a query row has no visible key")
    s = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(q.shape[-1])
    s = np.where(ok, s, -np.inf)
    w = stable_softmax(s)
    return w @ v, w


# ------------------------------------------------------------------- the tiny decoder
def draw_weights(seed=11):
    g = np.random.default_rng(seed)
    w = {"emb": g.normal(0.0, 0.3, (17, 8)), "out": g.normal(0.0, 0.2, (8, 17)), "layers": []}
    for _layer in (0, 1):
        layer = {}
        for name, shape in (
            ("q", (8, 8)),
            ("k", (8, 8)),
            ("v", (8, 8)),
            ("o", (8, 8)),
            ("gate", (8, 12)),
            ("up", (8, 12)),
            ("down", (12, 8)),
        ):
            layer[name] = g.normal(0.0, 0.2, shape)
        w["layers"].append(layer)
    return w


def norm(x):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-6)


def rotate(x, pos):
    """Pairwise RoPE of x [H, T, 4] at integer positions pos [T], base 10000."""
    inv = 1.0 / 10000.0 ** (np.arange(0, 4, 2) / 4)
    ang = np.outer(pos, inv)
    cos, sin = np.cos(ang), np.sin(ang)
    a, b = x[..., 0::2], x[..., 1::2]
    y = np.empty_like(x)
    y[..., 0::2] = a * cos - b * sin
    y[..., 1::2] = a * sin + b * cos
    return y


def heads(x):
    """[T, 8] → [2, T, 4]"""
    return x.reshape(x.shape[0], 2, 4).swapaxes(0, 1)


def mlp(x, p):
    h = norm(x)
    a = h @ p["gate"]
    return x + ((a / (1.0 + np.exp(-a))) * (h @ p["up"])) @ p["down"]


def run_all_positions(w, ids):
    """Logits [T, 17] of every position, computed in one pass with no cache."""
    x = w["emb"][ids].copy()
    n = len(ids)
    pos = np.arange(n)
    ok = np.tril(np.ones((n, n), dtype=bool))
    for p in w["layers"]:
        h = norm(x)
        out, _ = masked_attention(rotate(heads(h @ p["q"]), pos), rotate(heads(h @ p["k"]), pos), heads(h @ p["v"]), ok)
        x = x + out.swapaxes(0, 1).reshape(n, 8) @ p["o"]
        x = mlp(x, p)
    return norm(x) @ w["out"]


def run_with_cache(w, ids, fault="correct"):
    """Feed ids one by one through a per-layer cache; logits [T, 17] and the final cache.

    fault: "correct", "reset_rope_position" (rotate as if at 0), "copy_layer1_cache_to_layer2"
    (after each step layer 2's cache becomes a copy of layer 1's), "top_left_rectangular_mask"
    (the single query sees key 0 only).
    """
    cache = [None, None]
    rows = []
    for t, token in enumerate(ids):
        x = w["emb"][[token]].copy()
        where = np.array([0 if fault == "reset_rope_position" else t])
        for i, p in enumerate(w["layers"]):
            h = norm(x)
            q = rotate(heads(h @ p["q"]), where)
            k = rotate(heads(h @ p["k"]), where)
            v = heads(h @ p["v"])
            if cache[i] is not None:
                k = np.concatenate((cache[i][0], k), axis=1)
                v = np.concatenate((cache[i][1], v), axis=1)
            cache[i] = (k, v)
            seen = np.ones((1, t + 1), dtype=bool)
            if fault == "top_left_rectangular_mask":
                seen = np.tril(np.ones((1, t + 1), dtype=bool))
            out, _ = masked_attention(q, k, v, seen)
            x = x + out.swapaxes(0, 1).reshape(1, 8) @ p["o"]
            x = mlp(x, p)
        if fault == "copy_layer1_cache_to_layer2":
            cache[1] = (cache[0][0].copy(), cache[0][1].copy())
        rows.append((norm(x) @ w["out"])[0])
    return np.array(rows), cache


# ------------------------------------------------------------------------- the labs
def ce_check():
    z = np.array([[np.log(2.0), 0.0, 0.0]])
    y, keep = np.array([2]), np.array([True])
    loss, g = ce_with_mask(z, y, keep)
    fd = central_difference(lambda a: ce_with_mask(a, y, keep)[0], z)
    assert np.allclose(g, [[0.5, 0.25, -0.75]], atol=1e-14, rtol=0)
    assert np.allclose(g, fd, atol=1e-9, rtol=1e-8)
    assert abs(loss - np.log(4.0)) < 1e-12
    return {
        "loss_nat": loss,
        "gradient": g.tolist(),
        "finite_difference_step": 1e-5,
        "max_abs_gradient_error": float(np.abs(g - fd).max()),
        "abs_tolerance": 1e-9,
        "relative_tolerance": 1e-8,
    }


def mask_checks():
    z = np.random.default_rng(3).normal(size=(3, 4))
    y, keep = np.array([2, 1, 3]), np.array([True, False, True])
    loss, g = ce_with_mask(z, y, keep)
    fd = central_difference(lambda a: ce_with_mask(a, y, keep)[0], z)
    assert np.allclose(g, fd, atol=1e-9, rtol=1e-8)
    z2 = z.copy()
    z2[1] = [100.0, -100.0, 0.0, 0.0]
    delta = abs(ce_with_mask(z2, y, keep)[0] - loss)
    assert delta == 0.0 and not g[1].any()
    doc = np.repeat([0, 1], 4)
    predict = doc[1:] == doc[:-1]
    idx = np.arange(doc.size)
    visible = (idx[:, None] >= idx[None, :]) & (doc[:, None] == doc[None, :])
    assert not predict[3] and visible[4].sum() == 1 and visible[7].sum() == 4 and not visible[4:, :4].any()
    answer = np.array([0, 0, 0, 0, 1, 1, 1], dtype=bool)
    sft = np.nonzero(answer[1:])[0]
    assert sft.tolist() == [3, 4, 5]
    return {
        "masked_loss_nat": loss,
        "masked_row_gradient": g[1].tolist(),
        "max_abs_gradient_error": float(np.abs(g - fd).max()),
        "packing_prediction_mask": predict.astype(int).tolist(),
        "packing_attention_allowed": visible.astype(int).tolist(),
        "sft_prediction_positions": sft.tolist(),
        "masked_logits_perturbation_delta": delta,
    }


def attention_checks():
    out, w = masked_attention(
        np.array([[[1.0, 0.0]]]),
        np.array([[[1.0, 0.0], [0.0, 1.0]]]),
        np.array([[[2.0, 0.0], [0.0, 4.0]]]),
        np.ones((1, 2), dtype=bool),
    )
    x = np.random.default_rng(4).normal(size=(1, 5, 4))
    tri = np.tril(np.ones((5, 5), dtype=bool))
    a, aw = masked_attention(x, x, x, tri)
    x2 = x.copy()
    x2[:, 3:] += 100.0
    b, _ = masked_attention(x2, x2, x2, tri)
    prefix = float(np.abs(a[:, :3] - b[:, :3]).max())
    upper = float(np.abs(aw[:, ~tri]).max())
    assert prefix == 0.0 and upper == 0.0
    assert np.allclose(aw.sum(axis=-1), 1.0, atol=1e-14, rtol=0)
    return {
        "hand_example_weights": w[0, 0].tolist(),
        "hand_example_output": out[0, 0].tolist(),
        "future_perturbation_prefix_max_error": prefix,
        "upper_triangle_max_weight": upper,
    }


def cache_check():
    w = draw_weights()
    ids = np.array(LAB_IDS)
    full = run_all_positions(w, ids)
    step, cache = run_with_cache(w, ids)
    prefix = np.array([run_all_positions(w, ids[: n + 1])[-1] for n in range(len(ids))])
    assert np.allclose(full, step, atol=1e-12, rtol=1e-12)
    assert np.allclose(prefix, step, atol=1e-12, rtol=1e-12)
    assert not np.allclose(cache[0][0], cache[1][0])
    other = ids.copy()
    other[4:] = [10, 11, 12]
    future = float(np.abs(full[:4] - run_all_positions(w, other)[:4]).max())
    assert future == 0.0
    return {
        "configuration": {
            "layers": 2,
            "heads": 2,
            "head_dim": 4,
            "width": 8,
            "ffn_width": 12,
            "vocab": 17,
            "tokens": 7,
            "dtype": "float64",
            "position": "pairwise RoPE",
            "ffn": "SwiGLU",
        },
        "full_vs_cached_max_abs_logit_error": float(np.abs(full - step).max()),
        "prefix_vs_cached_max_abs_logit_error": float(np.abs(prefix - step).max()),
        "future_perturbation_prefix_max_error": future,
        "per_layer_cache_shapes": [list(k.shape) for k, _ in cache],
        "abs_tolerance": 1e-12,
        "relative_tolerance": 1e-12,
    }


def dpo_check():
    ref = np.array([-2.5, -2.5])
    pol = np.array([-2.0, -3.0])
    beta = 0.2

    def loss(lp):
        m = beta * ((lp[0] - ref[0]) - (lp[1] - ref[1]))
        return float(np.logaddexp(0.0, -m))

    m = beta * ((pol[0] - ref[0]) - (pol[1] - ref[1]))
    s = -beta / (1.0 + np.exp(m))
    grad = np.array([s, -s])
    fd = central_difference(loss, pol)
    assert np.allclose(grad, fd, atol=1e-9, rtol=1e-8)
    after = loss(pol - 0.1 * grad)
    lower = loss(pol + np.array([-1.0, -2.0]))
    assert after < loss(pol) and lower < loss(pol)
    return {
        "policy_log_probs": pol.tolist(),
        "reference_log_probs": ref.tolist(),
        "beta": beta,
        "margin": float(m),
        "loss_nat": loss(pol),
        "analytic_gradient": grad.tolist(),
        "max_abs_gradient_error": float(np.abs(grad - fd).max()),
        "loss_after_gradient_step": after,
        "both_probabilities_lower_counterexample_loss": lower,
    }


def grpo_check():
    r = np.array([[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])

    def normalise(x, ddof):
        return (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, ddof=ddof, keepdims=True) + 1e-8)

    pop, smp = normalise(r, 0), normalise(r, 1)
    assert np.allclose(pop[0], [-1, -1, 1, 1], atol=3e-8, rtol=0) and not pop[1:].any()
    perm = [3, 0, 2, 1]
    assert np.allclose(normalise(r[:, perm], 0), pop[:, perm])
    adv = np.array([2.0, -2.0, 2.0, -2.0])
    rho = np.array([1.5, 1.5, 0.5, 0.5])
    clipped = np.minimum(rho * adv, np.clip(rho, 0.8, 1.2) * adv)
    assert np.allclose(clipped, [2.4, -3.0, 1.0, -1.6])
    return {
        "rewards": r.tolist(),
        "population_std": r.std(axis=1).tolist(),
        "population_advantage": pop.tolist(),
        "sample_advantage": smp.tolist(),
        "epsilon": 1e-8,
        "ppo_clip_objectives": clipped.tolist(),
        "note": "advantages are frozen numeric values; this is not an actor training loop",
    }


def kl(p, q):
    nz = p > 0
    if (q[nz] == 0).any():
        return float("inf")
    return float((p[nz] * np.log(p[nz] / q[nz])).sum())


def kl_check():
    p, q = np.array([0.8, 0.2]), np.array([0.5, 0.5])
    fwd, rev = kl(p, q), kl(q, p)
    assert fwd > 0 and rev > 0 and fwd != rev and kl(p, p) == 0.0
    assert kl(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == float("inf")
    return {
        "p": p.tolist(),
        "q": q.tolist(),
        "forward_kl_nat": fwd,
        "reverse_kl_nat": rev,
        "identical_kl_nat": 0.0,
        "zero_reference_support": "positive p on zero q gives infinity",
    }


def accept_reject(p, q):
    """Speculative sampling pieces: accept prob, accepted mass, reject mass, residual, output law."""
    acc = np.ones(len(q))
    acc[q > 0] = np.minimum(p[q > 0] / q[q > 0], 1.0)
    kept = q * acc
    rej = float(1.0 - kept.sum())
    extra = np.clip(p - q, 0.0, None)
    resid = extra / extra.sum() if extra.sum() > 0 else np.zeros(len(p))
    return acc, kept, rej, resid, kept + rej * resid


def speculative_check(samples):
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.4, 0.2])
    acc, kept, rej, resid, law = accept_reject(p, q)
    assert np.abs(law - p).max() <= 1e-14
    for tp, dq in ((p, p), (np.array([0.0, 0.7, 0.3]), np.array([0.3, 0.7, 0.0]))):
        assert np.abs(accept_reject(tp, dq)[-1] - tp).max() <= 1e-14
    g = np.random.default_rng(73)
    draft = g.choice(3, size=samples, p=q)
    keep = g.random(samples) < acc[draft]
    final = draft.copy()
    final[~keep] = g.choice(3, size=int((~keep).sum()), p=resid)
    seen = np.bincount(final, minlength=3) / samples
    z = float((np.abs(seen - p) / np.sqrt(p * (1 - p) / samples)).max())
    assert z < 6.0
    return {
        "target": p.tolist(),
        "draft": q.tolist(),
        "accept_probability": acc.tolist(),
        "accepted_output_mass": kept.tolist(),
        "reject_probability": rej,
        "residual_distribution": resid.tolist(),
        "exact_output_distribution": law.tolist(),
        "exact_max_abs_error": float(np.abs(law - p).max()),
        "monte_carlo_seed": 73,
        "samples": samples,
        "observed_distribution": seen.tolist(),
        "observed_acceptance_rate": float(keep.mean()),
        "max_standard_error_units": z,
        "standard_error_bound_units": 6.0,
        "note": "single-prefix acceptance law; not a full multi-token decoder or speed benchmark",
    }


# ------------------------------------------------------------------ the supplement
def bandwidth():
    weights = 7_000_000_000 * 2
    kv = 2 * 32 * 8192 * 8 * 128 * 2
    bw = 1_000_000_000_000
    assert kv == 1 << 30
    cases = []
    for batch in (1, 8):
        total = weights + batch * kv
        sec = total / bw
        cases.append(
            {
                "batch": batch,
                "read_bytes": total,
                "lower_bound_ms": sec * 1000,
                "aggregate_token_rate_ceiling": batch / sec,
                "per_request_token_rate_ceiling": 1 / sec,
            }
        )
    return {
        "scope": "self-defined streaming-read lower bound, not measured throughput",
        "weight_bytes": weights,
        "per_request_kv_bytes": kv,
        "assumed_bandwidth_bytes_per_second": bw,
        "cases": cases,
    }


def unequal_ranks():
    ys = [np.ones(2), np.zeros(6)]
    w0, lr = 0.0, 0.4
    p0 = 1.0 / (1.0 + np.exp(-w0))
    sums = np.array([np.sum(p0 - y) for y in ys])
    counts = np.array([y.size for y in ys])
    naive = float(np.mean(sums / counts))
    right = float(sums.sum() / counts.sum())
    scaled = sums * len(ys) / counts.sum()
    ddp = float(scaled.mean())
    assert naive == 0.0 and right == 0.25 and ddp == right
    w1 = w0 - lr * right
    p1 = 1.0 / (1.0 + np.exp(-w1))
    old = float(np.log(2.0))
    new = float(-(2 * np.log(p1) + 6 * np.log1p(-p1)) / 8)
    assert new < old
    return {
        "rank_token_counts": counts.tolist(),
        "rank_gradient_sums": sums.tolist(),
        "rank_mean_gradients": (sums / counts).tolist(),
        "naive_average": naive,
        "global_token_average": right,
        "compensated_local_gradients": scaled.tolist(),
        "ddp_average_after_compensation": ddp,
        "learning_rate": lr,
        "old_w": w0,
        "correct_new_w": w1,
        "new_probability": float(p1),
        "old_global_loss": old,
        "correct_new_global_loss": new,
        "naive_new_global_loss": old,
        "scope": "one scalar logistic-regression step, not a multigpu execution",
    }


def cache_fault_cases():
    w = draw_weights()
    ids = np.array(LAB_IDS)
    want = run_all_positions(w, ids)
    cases = []
    for mode in ("correct", "reset_rope_position", "copy_layer1_cache_to_layer2", "top_left_rectangular_mask"):
        got, cache = run_with_cache(w, ids, mode)
        cases.append(
            {
                "mode": mode,
                "shape_check_passed": all(k.shape == (2, 7, 4) and v.shape == (2, 7, 4) for k, v in cache),
                "per_layer_cache_shapes": [list(k.shape) for k, _ in cache],
                "max_absolute_logit_error": float(np.abs(want - got).max()),
                "logit_allclose_passed": bool(np.allclose(want, got, atol=1e-12, rtol=1e-12)),
                "distinct_layer_keys_passed": not np.allclose(cache[0][0], cache[1][0]),
            }
        )
    assert cases[0]["logit_allclose_passed"] and all(c["shape_check_passed"] for c in cases)
    assert not any(c["logit_allclose_passed"] for c in cases[1:])
    copied = next(c for c in cases if c["mode"] == "copy_layer1_cache_to_layer2")
    assert copied["distinct_layer_keys_passed"] is False
    return {"tokens": ids.tolist(), "atol": 1e-12, "rtol": 1e-12, "cases": cases}


def wrong_fallback():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.4, 0.2])
    _, kept, rej, resid, right = accept_reject(p, q)
    wrong = kept + rej * p
    diff = wrong - p
    assert np.allclose(right, p, atol=1e-14) and np.allclose(wrong, [0.52, 0.36, 0.12])
    return {
        "target": p.tolist(),
        "draft": q.tolist(),
        "accepted_mass": kept.tolist(),
        "reject_mass": rej,
        "correct_residual": resid.tolist(),
        "correct_output": right.tolist(),
        "wrong_output": wrong.tolist(),
        "wrong_minus_target": diff.tolist(),
        "wrong_l1_distance": float(np.abs(diff).sum()),
        "wrong_total_variation_distance": float(np.abs(diff).sum() / 2),
        "scope": "exact single-prefix mass enumeration, not Monte Carlo",
    }


# ---------------------------------------------------------------------- the reports
def runtime():
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "dtype": "float64",
    }


def labs_report(samples=200_000):
    t0 = time.perf_counter()
    labs = {
        "ce_gradient": ce_check(),
        "masks": mask_checks(),
        "causal_attention": attention_checks(),
        "cache_equivalence": cache_check(),
        "dpo": dpo_check(),
        "grpo": grpo_check(),
        "kl": kl_check(),
        "speculative_sampling": speculative_check(samples),
    }
    return {
        "status": "passed",
        "scope": "8 NumPy mechanism labs; no model training",
        "timestamp_shanghai": datetime.now(SHANGHAI).isoformat(),
        "runtime": runtime(),
        "elapsed_seconds": time.perf_counter() - t0,
        "labs": labs,
    }


def faults_report():
    return {
        "status": "passed",
        "timestamp_shanghai": datetime.now(SHANGHAI).isoformat(),
        "runtime": runtime(),
        "bandwidth_budget": bandwidth(),
        "unequal_rank_gradients": unequal_ranks(),
        "cache_faults": cache_fault_cases(),
        "wrong_rejection_fallback": wrong_fallback(),
    }


def main(argv=None):
    cli = argparse.ArgumentParser(description="Baseline for `labkit labs` / `labkit faults`.")
    cli.add_argument("which", choices=("labs", "faults"))
    cli.add_argument("--output", type=Path, required=True)
    cli.add_argument("--samples", type=int, default=200_000)
    args = cli.parse_args(argv)
    if args.samples < 10_000:
        cli.error(f"--samples must be at least 10000, got {args.samples}")
    report = labs_report(args.samples) if args.which == "labs" else faults_report()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
