"""Solutions to the exercises of labs 06–12 (speculative sampling, the bandwidth bound, the two
supplements, the reports).  Teachers: remove this folder from the students' copy."""

import numpy as np

from labkit.labs import report as reports


def speculative_parts(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    accept = np.ones_like(p)
    proposed = q > 0
    accept[proposed] = np.minimum(1.0, p[proposed] / q[proposed])
    uncovered = np.clip(p - q, 0.0, None)
    total = uncovered.sum()
    residual = uncovered / total if total > 0 else np.zeros_like(p)
    return accept, residual


def decode_step_lower_bound_ms(budget, batch):
    weights = budget.n_params * budget.bytes_per_param
    cache = 2 * budget.n_layers * budget.context * budget.n_kv_heads * budget.head_dim * budget.kv_bytes_per_element
    return (weights + batch * cache) / budget.bandwidth_bytes_per_second * 1000


def compensated_local_gradients(rank_gradient_sums, rank_token_counts):
    sums = np.asarray(rank_gradient_sums, dtype=float)
    return sums * len(sums) / np.sum(rank_token_counts)


LAB_NAMES = [key for key, _ in reports.LABS]  # the chapter's eight labs


def report_problems(report):
    if not isinstance(report, dict):
        return [f"the report must be an object, got {type(report).__name__}"]
    problems = []
    status = report.get("status")
    required = ["status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs"]
    if status == "failed":
        required += ["failed_lab", "failure"]
    problems += [f"missing key {key!r}" for key in required if key not in report]
    problems += [f"unexpected key {key!r}" for key in report if key not in required]
    if "status" in report and status not in ("passed", "failed"):
        problems.append(f"status must be 'passed' or 'failed', got {status!r}")
    for key in ("scope", "timestamp_shanghai", "failed_lab", "failure"):
        if key in report and key in required and not isinstance(report[key], str):
            problems.append(f"{key} must be a string")
    seconds = report.get("elapsed_seconds", 0)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        problems.append("elapsed_seconds must be a number")
    runtime = report.get("runtime", {})
    if not isinstance(runtime, dict):
        problems.append("runtime must be an object")
    else:
        wanted = ("python", "numpy", "platform", "dtype")
        problems += [f"runtime is missing {key!r}" for key in wanted if key not in runtime]
        problems += [f"runtime has an unexpected key {key!r}" for key in runtime if key not in wanted]
    labs = report.get("labs", {})
    if not isinstance(labs, dict):
        problems.append("labs must be an object")
        return problems
    problems += [f"labs has an unknown lab {key!r}" for key in labs if key not in LAB_NAMES]
    problems += [f"labs[{key!r}] must be an object" for key, value in labs.items() if not isinstance(value, dict)]
    if status == "passed":
        problems += [f"a passing report lacks the lab {key!r}" for key in LAB_NAMES if key not in labs]
    return problems


def second_draft(p, q):
    """The second draft is verified against the first residual, the law the output owes after a rejection."""
    first_residual = speculative_parts(p, q)[1]
    return speculative_parts(first_residual, q)
