"""Exercise of lab 10: the bandwidth lower bound of one decode step, on the source's layout and four others."""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace

from labkit.check.grading import function


def _bandwidth_cases():
    from labkit.labs.bandwidth import DecodeBudget

    source = DecodeBudget()
    layouts = {
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
    return [(case, (SimpleNamespace(**asdict(budget)), batch)) for case, (budget, batch) in layouts.items()]


def _lower_bound_ms(fields, batch) -> float:
    """Hidden reference: the lab's own bound for the layout the reader was handed."""
    from labkit.labs.bandwidth import DecodeBudget

    return DecodeBudget(**vars(fields)).step(batch)["lower_bound_ms"]


function(
    "decode_step_lower_bound_ms",
    "notebooks/11-labs/10-bandwidth-budget.md",
    "extend",
    "return the streaming-read lower bound of one decode step in milliseconds for a layout handed over as "
    "numbers (budget has the fields of labkit.labs.bandwidth.DecodeBudget: n_params, bytes_per_param, "
    "n_layers, context, n_kv_heads, head_dim, kv_bytes_per_element, bandwidth_bytes_per_second), batch ≥ 1",
    ("budget", "batch"),
    _bandwidth_cases,
    _lower_bound_ms,
    atol=1e-9,
    outputs=("lower_bound_ms",),
    idea="a decode step has to stream every byte it reads through memory once: count the bytes, then divide "
    "by the bandwidth",
    rule="the weights are read once per step whatever the batch, each request's cache once per request, and "
    "a cache holds keys and values; bytes over bytes per second is seconds",
)
