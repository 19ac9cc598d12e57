"""The teacher's key to chapter 11's labs 07–13: each graded exercise's hidden reference and the hidden cases
(other shapes, seeds, layouts, pairs, reports) it is graded on, beside the public properties in
``labkit.check.labs_ii`` and ``labkit.check.labs_ii_serving``. Not in the kit: a class copy leaves it out.
"""

from __future__ import annotations

import copy

import numpy as np

from labkit.check.core import function, table
from labkit.check.labs_ii_serving import damaged, layout, real_reports
from labkit.labs.bandwidth import DecodeBudget
from labkit.labs.speculative import speculative_mass

# --- 07 ------------------------------------------------------------------------------------------------


def _reward_groups():
    rng = np.random.default_rng(2027)
    many = rng.normal(size=(4, 5))
    many_valid = rng.random((4, 5)) < 0.7
    many_valid[3] = [True, False, False, False, False]  # one valid answer: no baseline
    many[~many_valid] = np.nan
    sixteen = (rng.random((1, 16)) < 0.3).astype(float)
    return [
        ("hidden: one group of three, all valid", (np.array([[2.0, 0.0, 1.0]]), np.ones((1, 3), bool))),
        ("hidden: four groups of five, some answers invalid (NaN)", (many, many_valid)),
        ("hidden: sixteen 0/1 rewards, all valid", (sixteen, np.ones((1, 16), bool))),
        ("hidden: a group with no valid answer", (np.full((1, 3), np.nan), np.zeros((1, 3), bool))),
    ]


@function(_reward_groups)
def rloo_advantages(rewards, valid):
    r = np.where(valid, rewards, 0.0)
    n = valid.sum(axis=-1, keepdims=True)
    return np.where(valid & (n >= 2), r - (r.sum(axis=-1, keepdims=True) - r) / np.maximum(n - 1, 1), 0.0)


def _success_rates():
    return [(f"hidden: p = {p}, k = {k}", (p, k)) for p, k in ((0.5, 2), (0.1, 8), (0.99, 64), (0.37, 5), (0.2, 1))]


@function(_success_rates)
def informative_group_probability(p, k):
    return 1.0 - p**k - (1.0 - p) ** k  # not all right and not all wrong


# --- 08 ------------------------------------------------------------------------------------------------


def _gaussians():
    cases = (
        (0.0, 1.0, 1.0, 1.0),
        (0.0, 2.0, 0.0, 1.0),
        (10.0, 0.5, -10.0, 3.0),
        (-3.0, 4.0, 12.0, 0.2),
        (1, 1e-3, 1, 1),
    )
    return [(f"hidden: N({a}, {b}²) ‖ N({c}, {d}²)", (a, b, c, d)) for a, b, c, d in cases]


@function(_gaussians)
def gaussian_kl(mu_p, sigma_p, mu_q, sigma_q):
    return float(np.log(sigma_q / sigma_p) + (sigma_p**2 + (mu_p - mu_q) ** 2) / (2 * sigma_q**2) - 0.5)


def _logit_rows():
    rng = np.random.default_rng(33)
    return [
        ("hidden: seeded logits [50]", (rng.normal(0, 2, 50), rng.normal(0, 2, 50))),
        ("hidden: a row 2000 below the other", (np.array([0.0, 1.0, 2.0]), np.array([0.0, -2000.0, 1.0]))),
        ("hidden: logits near −1e4", (np.array([-1e4, -1e4 + 3, -1e4 + 1]), np.array([-1e4 + 2, -1e4, -1e4]))),
    ]


@function(_logit_rows)
def kl_from_logits(z_p, z_q):
    lp, lq = (z - np.max(z) - np.log(np.sum(np.exp(z - np.max(z)))) for z in (z_p, z_q))  # log-softmax
    return float(np.sum(np.exp(lp) * (lp - lq)))


# --- 09 ------------------------------------------------------------------------------------------------


def _pairs(seed: int = 9, count: int = 3):
    rng = np.random.default_rng(seed)
    found = []
    for i in range(count):
        p, q = rng.dirichlet(np.ones(5 + i)), rng.dirichlet(np.ones(5 + i))
        p[i % p.size], q[(i + 1) % q.size] = 0.0, 0.0
        found.append((f"hidden: seeded pair {i} of {p.size} tokens", (p / p.sum(), q / q.sum())))
    return [*found, ("hidden: p one-hot, q uniform", (np.array([0.0, 1.0, 0.0]), np.full(3, 1 / 3)))]


@table()
def verify_draft():
    return [(label, (p, q), (p, float(np.minimum(p, q).sum()))) for label, (p, q) in _pairs()]


def _rejecting_pairs():
    return _pairs(seed=19)


@function(_rejecting_pairs)
def second_draft(p, q):
    first = speculative_mass(p, q)
    second = speculative_mass(first.residual, q)  # the first residual plays the target's part
    return np.where(q > 0, second.accept_probability, 0.0), second.residual


def _position_rates():
    rows = ((0.5, 0.9), (0.3,) * 6, (0.99, 0.98, 0.97, 0.96, 0.95, 0.1), (0.0, 0.9), (0.8, 0.6, 0.4, 0.2, 0.0, 1.0))
    return [(f"hidden: alphas {list(r)}", (list(r),)) for r in rows]


@function(_position_rates)
def tokens_per_target_call(alphas):
    return float(1.0 + np.sum(np.cumprod(np.asarray(alphas, dtype=np.float64))))  # draft j counts if 1 … j kept


def _rates_and_drafts():
    return [(f"hidden: alpha = {a}, k = {k}", (a, k)) for a, k in ((0.6, 2), (0.99, 16), (0.1, 5), (0.7, 1))]


@function(_rates_and_drafts)
def break_even_draft_cost(alpha, k):
    return float(np.sum(np.asarray(alpha, dtype=np.float64) ** np.arange(1, k + 1)) / k)  # (E − 1) / k


# --- 10–13 ---------------------------------------------------------------------------------------------


def _layouts():
    big = DecodeBudget(70_000_000_000, n_layers=80, n_kv_heads=8, bandwidth_bytes_per_second=3_350_000_000_000)
    return [
        ("hidden: a 70B model, 80 layers, 3.35 TB/s", (layout(big), [128_000, 3, 4096])),
        ("hidden: one request of one token", (layout(DecodeBudget(head_dim=64)), [1])),
        ("hidden: sixteen requests", (layout(DecodeBudget(kv_bytes_per_element=1)), list(range(100, 1700, 100)))),
    ]


@function(_layouts)
def decode_step_lower_bound_ms(budget, contexts):
    per_token = 2 * budget.n_layers * budget.n_kv_heads * budget.head_dim * budget.kv_bytes_per_element
    read = budget.n_params * budget.bytes_per_param + per_token * sum(contexts)  # weights once, each cache once
    return read / budget.bandwidth_bytes_per_second * 1000


def _grids():
    rng = np.random.default_rng(12)
    return [
        ("hidden: eight ranks, four micro-batches", (rng.integers(1, 60, size=(8, 4)),)),
        ("hidden: one rank, one micro-batch", (np.array([[13]]),)),
        ("hidden: two ranks of very unequal counts", (np.array([[1, 1000], [500, 2]]),)),
    ]


@function(_grids)
def loss_scale_factors(token_counts):
    n = np.asarray(token_counts, dtype=np.float64)
    return n * n.shape[0] / n.sum()  # a micro-batch's mean times R·n / N: its sum over N, times R


@table()
def report_problems():
    good, failed, faults = real_reports()
    damages = [
        (
            "hidden: a passing report whose timestamp is a number",
            good,
            lambda r: r.update(timestamp_shanghai=3),
            "time",
        ),
        ("hidden: a passing report without “scope”", good, lambda r: r.pop("scope"), "scope"),
        ("hidden: a passing report whose runtime is a string", good, lambda r: r.update(runtime="x"), "runtime"),
        ("hidden: a passing report with a runtime key “gpu”", good, lambda r: r["runtime"].update(gpu="x"), "gpu"),
        ("hidden: a failed report without “failed_lab”", failed, lambda r: r.pop("failed_lab"), "failed_lab"),
        ("hidden: a failed report whose failure is a list", failed, lambda r: r.update(failure=[]), "failure"),
        ("hidden: a report whose labs is a list", good, lambda r: r.update(labs=[]), "labs"),
        (
            "hidden: a passing report whose elapsed_seconds is True",
            good,
            lambda r: r.update(elapsed_seconds=True),
            "elapsed",
        ),
    ]
    rows = [(case, (damaged(report, change),), f"a problem naming {key!r}") for case, report, change, key in damages]
    return [*rows, ("hidden: a real passing report, copied", (copy.deepcopy(good),), [])]


def _curves():
    rng = np.random.default_rng(13)
    contexts = [8, 16, 32, 64, 128, 256, 512]
    t = np.array(contexts, dtype=float)
    return [
        ("hidden: a noisy T^1.2 curve", (contexts, list(0.01 * t**1.2 * rng.lognormal(0, 0.2, t.size)))),
        ("hidden: a noisy flat curve", (contexts, list(0.3 * rng.lognormal(0, 0.3, t.size)))),
        ("hidden: five points, T^0.5 with noise", (contexts[:5], list(2 * t[:5] ** 0.5 * rng.lognormal(0, 0.1, 5)))),
    ]


@function(_curves)
def growth_exponent(contexts, times_ms):
    x, y = np.log(np.asarray(contexts, dtype=float)), np.log(np.asarray(times_ms, dtype=float))
    i, j = np.triu_indices(x.size, k=1)
    return float(np.median((y[j] - y[i]) / (x[j] - x[i])))  # Theil–Sen: the median of every pair's slope
