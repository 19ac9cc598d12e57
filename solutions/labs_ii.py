"""Solutions to the exercises of labs 06–12 (DPO, GRPO, KL, speculative sampling, the two
supplements, the reports).  Teachers: remove this folder from the students' copy."""

import math

import numpy as np

from labkit.labs import report as reports


def dpo_gradient(policy, reference, beta):
    delta = (policy[0] - reference[0]) - (policy[1] - reference[1])
    pull = beta / (1.0 + np.exp(beta * delta))  # β·σ(−m); exp(+large) → inf → 0, never NaN
    return np.array([-pull, pull])


def grpo_advantages(rewards, ddof, eps):
    r = np.asarray(rewards, dtype=float)
    mean = r.mean(axis=1, keepdims=True)
    spread = np.sqrt(((r - mean) ** 2).sum(axis=1, keepdims=True) / (r.shape[1] - ddof))
    return (r - mean) / (spread + eps)


def kl_divergence(p, q):
    total = 0.0
    for p_i, q_i in zip(p, q, strict=True):
        if p_i == 0:
            continue
        if q_i == 0:
            return math.inf
        total += p_i * math.log(p_i / q_i)
    return total


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
