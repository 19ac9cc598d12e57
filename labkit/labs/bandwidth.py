"""Supplement ``bandwidth_budget``: a streaming-read lower bound on one decode step.

Each decode step must at least read every weight once and, for each request in the batch,
its whole KV cache.  With bandwidth B (bytes/s), that reading alone takes

    weight_bytes = N_params · bytes_per_param
    kv_bytes     = 2 (K and V) · L · T · H_kv · D_h · bytes_per_element      per request
    read_bytes   = weight_bytes + batch · kv_bytes
    t_step ≥ read_bytes / B,    tokens/s ≤ batch / t_step (all requests),  ≤ 1 / t_step (each)

Arithmetic on assumed sizes, nothing measured: real steps also pay for compute, activations, launches.
"""

from dataclasses import dataclass, fields

from labkit.core.guards import is_integer
from labkit.labs.common import require

SCOPE = "self-defined streaming-read lower bound, not measured throughput"


@dataclass(frozen=True)
class DecodeBudget:
    """A model, its KV-cache layout and the memory it streams from (the source's 7B example)."""

    n_params: int = 7_000_000_000
    bytes_per_param: int = 2  # fp16 / bf16 weights
    n_layers: int = 32
    context: int = 8192  # cached tokens per request
    n_kv_heads: int = 8
    head_dim: int = 128
    kv_bytes_per_element: int = 2  # fp16 cache
    bandwidth_bytes_per_second: int = 1_000_000_000_000  # 1 TB/s, assumed

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if not is_integer(value) or value < 1:
                raise ValueError(f"DecodeBudget.{field.name} must be a positive integer, got {value!r}")

    @property
    def weight_bytes(self) -> int:
        return self.n_params * self.bytes_per_param

    @property
    def kv_bytes_per_request(self) -> int:
        """2 · L · T · H_kv · D_h · bytes: one request's K and V for every layer and cached token."""
        return 2 * self.n_layers * self.context * self.n_kv_heads * self.head_dim * self.kv_bytes_per_element

    def step(self, batch: int) -> dict:
        """Bound for one decode step of ``batch`` requests: bytes read, ms, token-rate ceilings."""
        if not is_integer(batch) or batch < 1:
            raise ValueError(f"batch must be a positive integer, got {batch!r}")
        read_bytes = self.weight_bytes + batch * self.kv_bytes_per_request
        seconds = read_bytes / self.bandwidth_bytes_per_second
        return {
            "batch": batch,
            "read_bytes": read_bytes,
            "lower_bound_ms": seconds * 1000,
            "aggregate_token_rate_ceiling": batch / seconds,
            "per_request_token_rate_ceiling": 1 / seconds,
        }


def run(batches=(1, 8)) -> dict:
    """The source report's ``bandwidth_budget`` object (7B layout; check: its KV cache is 2³⁰ bytes a request)."""
    budget = DecodeBudget()
    kv = budget.kv_bytes_per_request
    require(kv == 2**30, f"bandwidth: the 7B layout's KV cache should be 2**30 bytes per request, got {kv}")
    return {
        "scope": SCOPE,
        "weight_bytes": budget.weight_bytes,
        "per_request_kv_bytes": budget.kv_bytes_per_request,
        "assumed_bandwidth_bytes_per_second": budget.bandwidth_bytes_per_second,
        "cases": [budget.step(int(b)) for b in batches],
    }
