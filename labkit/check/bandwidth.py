"""Exercise of lab 10: the bandwidth lower bound of one decode step."""

from __future__ import annotations

import math

from labkit.check._support import in_case
from labkit.check.core import CheckResult, call, exercise, failure, number, passed


def _bandwidth_cases():
    from labkit.labs.bandwidth import DecodeBudget

    source = DecodeBudget()
    return {
        "the source's 7B fp16 layout, batch 1": (source, 1),
        "the source's 7B fp16 layout, batch 8": (source, 8),
        "one byte per weight and per cache element, batch 8": (
            DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1),
            8,
        ),
        "32 KV heads instead of 8, batch 8": (DecodeBudget(n_kv_heads=32), 8),
        "a 1.5B model, 28 layers, 2 KV heads, 32 768 tokens, 2 TB/s, batch 64": (
            DecodeBudget(
                n_params=1_500_000_000,
                n_layers=28,
                context=32_768,
                n_kv_heads=2,
                bandwidth_bytes_per_second=2_000_000_000_000,
            ),
            64,
        ),
    }


def _bandwidth_hint(got: float, budget, batch: int, expected: float) -> str:
    weights, kv, bandwidth = (budget.weight_bytes, budget.kv_bytes_per_request, budget.bandwidth_bytes_per_second)

    def ms(read_bytes: float) -> float:
        return read_bytes / bandwidth * 1000

    def near(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9)

    if near(expected / 1000):
        return "bytes / (bytes per second) is in seconds: the answer is in milliseconds"
    if near(ms(weights + batch * kv / 2)):
        return "the cache holds keys and values: 2 · L · T · H_kv · D_h elements per request"
    if near(ms(batch * (weights + kv))):
        return (
            "the weights are read once per step, however many requests share it; only the caches scale with the batch"
        )
    if near(ms(weights + kv)):
        return "each request has its own KV cache: a batch of b requests reads b caches per step"
    if near(ms(weights)):
        return "the step reads every request's KV cache as well as the weights"
    return "bytes read = N·bytes per weight + batch · 2·L·T·H_kv·D_h·bytes per element; time ≥ bytes / bandwidth"


@exercise(
    "decode_step_lower_bound_ms",
    page="notebooks/11-labs/10-bandwidth-budget.md",
    signature=("budget", "batch"),
    kind="extend",
    idea=(
        "a decode step has to stream every byte it reads through memory once: count the bytes, then divide by"
        " the bandwidth"
    ),
)
def decode_step_lower_bound_ms(candidate) -> CheckResult:
    """return the streaming-read lower bound of one decode step in milliseconds: (weights + batch ·
    K and V of one request's cache) bytes / bandwidth; budget has the fields of
    labkit.labs.bandwidth.DecodeBudget (n_params, bytes_per_param, n_layers, context,
    n_kv_heads, head_dim, kv_bytes_per_element, bandwidth_bytes_per_second), batch ≥ 1"""
    from dataclasses import asdict
    from types import SimpleNamespace

    for case, (budget, batch) in _bandwidth_cases().items():
        expected = budget.step(batch)["lower_bound_ms"]
        fields = SimpleNamespace(**asdict(budget))  # the layout's numbers, without labkit's answer
        with in_case(case):
            got = number(call(candidate, fields, batch), "the lower bound")
        if math.isfinite(got) and math.isclose(got, expected, rel_tol=1e-12, abs_tol=0.0):
            continue
        return failure(
            "the lower bound differs",
            where=f"case “{case}”",
            rule="t_step ≥ (N·s_w + b·2·L·T·H_kv·D_h·s_kv) / B, in ms (relative 1e-12)",
            got=got,
            expected=expected,
            hint=_bandwidth_hint(got, budget, batch, expected),
        )
    return passed(
        f"all {len(_bandwidth_cases())} layouts match; the source's 7B example: "
        "≥ 15.073741824 ms at batch 1, ≥ 22.589934592 ms at batch 8"
    )
