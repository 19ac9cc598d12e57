"""The bandwidth calculator's data (lab 10): a ``labkit.labs.bandwidth.DecodeBudget`` for every choice on
the page's grid (a kernel makes the grid for another model).

    data = {"player": "bandwidth_calculator", "title", "model": {"n_params", "n_layers", "head_dim"},
            "axes": {name: [str]}, "start": {name: str}, "batches": [B],
            "budgets": {"bytes_per_param|kv_bytes|context|kv_heads|tb": {"weight_bytes", "kv_bytes",
                        "limit", "steps": [[read_bytes, lower_bound_ms, aggregate, per_request]] (per batch)}}}
"""

from labkit.labs.bandwidth import DecodeBudget
from labkit.reader.players.data import grid, r4, words

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)
AXES = {
    "bytes_per_param": (2, 4, 1),  # fp16/bf16, fp32, int8/fp8
    "kv_bytes": (2, 1, 4),  # fp16, fp8, fp32
    "context": (8192, 2048, 32768),
    "kv_heads": (8, 32),
    "tb": (1, 2),  # TB/s
}
MODEL = {"n_params": DecodeBudget.n_params, "n_layers": DecodeBudget.n_layers, "head_dim": DecodeBudget.head_dim}


#: the bound and the two ceilings of a step, after its bytes read
RATES = ("lower_bound_ms", "aggregate_token_rate_ceiling", "per_request_token_rate_ceiling")


def budget_data(budget: DecodeBudget) -> dict:
    steps = [budget.step(b) for b in BATCHES]
    return {
        "weight_bytes": budget.weight_bytes,
        "kv_bytes": budget.kv_bytes_per_request,
        "limit": r4(budget.bandwidth_bytes_per_second / budget.kv_bytes_per_request),
        "steps": [[s["read_bytes"], *(r4(s[rate]) for rate in RATES)] for s in steps],
    }


def static_data(model: dict = MODEL) -> dict:
    def budget(param, kv, context, heads, tb) -> dict:
        layout = {"bytes_per_param": param, "kv_bytes_per_element": kv, "context": context, "n_kv_heads": heads}
        return budget_data(DecodeBudget(**model, **layout, bandwidth_bytes_per_second=tb * 10**12))

    return {
        "title": words(
            "Decode-step bandwidth budget (lab 10): a lower bound from arithmetic, not a measurement",
            "decode 步的带宽预算（实验 10）：由算术得出的下界，不是测量值",
        ),
        "model": dict(model),
        "axes": {name: [str(v) for v in values] for name, values in AXES.items()},
        "start": {name: str(values[0]) for name, values in AXES.items()} | {"batch": "8"},
        "batches": list(BATCHES),
        "budgets": grid(AXES, budget),
    }


def recompute(data: dict, request: dict) -> dict:
    """``request = {"n_params", "n_layers", "head_dim"}`` (integers): the grid for another model."""
    return static_data({name: request.get(name, value) for name, value in data["model"].items()})
