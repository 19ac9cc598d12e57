"""Worked solutions to the exercises of chapter 11's labs 07–13 (GRPO, KL, speculative sampling, the
bandwidth bound, unequal ranks, the reports, measuring): what a student would hand in — a function for an
extend, derive or diagnose exercise, a number worked out by hand for a prediction."""

import math

import numpy as np

from labkit.labs import report as reports

# --- 07 GRPO and the PPO clip ---------------------------------------------------------------------------


def informative_group_probability(p, k):
    """Silent groups are all right (p^k) or all wrong ((1 − p)^k); any other group has a nonzero advantage."""
    return 1.0 - p**k - (1.0 - p) ** k


# ρÂ = −10 is below c·Â = −6: the dual clip holds J there
dual_clip_value = -6.0


def rloo_advantages(rewards, valid):
    valid = np.asarray(valid, dtype=bool)
    r = np.where(valid, np.asarray(rewards, dtype=np.float64), 0.0)  # an invalid reward never reaches a sum
    n = valid.sum(axis=-1, keepdims=True)
    others = (r.sum(axis=-1, keepdims=True) - r) / np.maximum(n - 1, 1)
    return np.where(valid & (n >= 2), r - others, 0.0)


# --- 08 KL divergence -----------------------------------------------------------------------------------

# q gives the third outcome mass, p rules it out: KL(q ‖ p) weighs log(q/0)
finite_direction = "pq"


def gaussian_kl(mu_p, sigma_p, mu_q, sigma_q):
    """E_p[log p − log q] = log(σ_q/σ_p) + E_p[(x − μ_q)²]/(2σ_q²) − E_p[(x − μ_p)²]/(2σ_p²)."""
    return math.log(sigma_q / sigma_p) + (sigma_p**2 + (mu_p - mu_q) ** 2) / (2 * sigma_q**2) - 0.5


def kl_from_logits(z_p, z_q):
    def log_softmax(z):
        z = np.asarray(z, dtype=np.float64) - np.max(z)
        return z - np.log(np.sum(np.exp(z)))

    log_p, log_q = log_softmax(z_p), log_softmax(z_q)
    return float(np.sum(np.exp(log_p) * (log_p - log_q)))


# --- 09 speculative sampling ----------------------------------------------------------------------------


def verify_draft(p, q, x, u, v):
    p, q, x = np.asarray(p, dtype=float), np.asarray(q, dtype=float), np.asarray(x)
    keep = np.ones_like(p)
    proposed = q > 0
    keep[proposed] = np.minimum(1.0, p[proposed] / q[proposed])
    excess = np.clip(p - q, 0.0, None)
    if excess.sum() == 0:  # p = q: every draft is kept
        return x.astype(int)
    cumulative = np.cumsum(excess / excess.sum())
    replacement = np.minimum(np.searchsorted(cumulative, v, side="right"), p.size - 1)
    return np.where(u < keep[x], x, replacement).astype(int)


def _verify(p, q):
    """(accept, residual) of target p verifying a draft from q."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    accept = np.ones_like(p)
    proposed = q > 0
    accept[proposed] = np.minimum(1.0, p[proposed] / q[proposed])
    excess = np.clip(p - q, 0.0, None)
    total = excess.sum()
    return accept, (excess / total if total > 0 else np.zeros_like(p))


def second_draft(p, q):
    """The second draft is verified against the first residual, the law the output owes after a rejection."""
    first_residual = _verify(p, q)[1]
    return _verify(first_residual, q)


# Σ min(p, q) = 0.2 + 0.3 + 0 = 0.5 is kept
rejection_probability = 0.5


def tokens_per_target_call(alphas):
    """1 + Σ_j P(drafts 1 … j all kept) = 1 + Σ_j α_1·…·α_j."""
    tokens, survive = 1.0, 1.0
    for alpha in alphas:
        survive *= alpha
        tokens += survive
    return tokens


def break_even_draft_cost(alpha, k):
    """speedup = E / (c·k + 1) = 1 with E = 1 + α + … + α^k, so c = (α + … + α^k) / k."""
    return sum(alpha**j for j in range(1, k + 1)) / k


# --- 10 the bandwidth budget ------------------------------------------------------------------------------


def decode_step_lower_bound_ms(budget, contexts):
    weights = budget.n_params * budget.bytes_per_param
    per_token = 2 * budget.n_layers * budget.n_kv_heads * budget.head_dim * budget.kv_bytes_per_element
    return (weights + per_token * sum(contexts)) / budget.bandwidth_bytes_per_second * 1000


# (7·10⁹ + 8 · 2·32·8192·8·128) bytes at 10¹² bytes/s, in ms
quantised_batch8_ms = (7e9 + 8 * 2 * 32 * 8192 * 8 * 128) / 1e12 * 1000

# --- 11 unequal ranks -------------------------------------------------------------------------------------

# rank means (1/2 − 1)/1 and (1/2·7 − 1)/7
moved_token_naive_average = (-0.5 + 2.5 / 7) / 2


def loss_scale_factors(token_counts):
    """mean_r Σ_m f·S/n = Σ S / N for every S: f = R·n / N."""
    n = np.asarray(token_counts, dtype=float)
    return n * n.shape[0] / n.sum()


# --- 12 the reports ---------------------------------------------------------------------------------------

LAB_NAMES = [name for name, _ in reports.LABS]  # reports.LABS holds (name, runner) pairs


def report_problems(report):
    if not isinstance(report, dict):
        return [f"the report must be an object, got {type(report).__name__}"]
    status = report.get("status")
    required = ["status", "scope", "timestamp_shanghai", "runtime", "elapsed_seconds", "labs"]
    if status == "failed":
        required += ["failed_lab", "failure"]
    problems = [f"missing key {key!r}" for key in required if key not in report]
    problems += [f"unexpected key {key!r}" for key in report if key not in required]
    if "status" in report and status not in ("passed", "failed"):
        problems.append(f"status must be 'passed' or 'failed', got {status!r}")
    for key in ("scope", "timestamp_shanghai", "failed_lab", "failure"):
        if key in report and key in required and not isinstance(report[key], str):
            problems.append(f"{key} must be a string")
    seconds = report.get("elapsed_seconds", 0)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        problems.append("elapsed_seconds must be a number")
    return problems + _runtime_problems(report.get("runtime", {})) + _lab_problems(report.get("labs", {}), status)


def _runtime_problems(runtime):
    if not isinstance(runtime, dict):
        return ["runtime must be an object"]
    wanted = ("python", "numpy", "platform", "dtype")
    problems = [f"runtime is missing {key!r}" for key in wanted if key not in runtime]
    return problems + [f"runtime has an unexpected key {key!r}" for key in runtime if key not in wanted]


def _lab_problems(labs, status):
    if not isinstance(labs, dict):
        return ["labs must be an object"]
    problems = [f"labs has an unknown lab {key!r}" for key in labs if key not in LAB_NAMES]
    problems += [f"labs[{key!r}] must be an object" for key, value in labs.items() if not isinstance(value, dict)]
    if status == "passed":
        problems += [f"a passing report lacks the lab {key!r}" for key in LAB_NAMES if key not in labs]
    return problems


# --- 13 measuring the book --------------------------------------------------------------------------------


def growth_exponent(contexts, times_ms):
    log_t = np.log(np.asarray(contexts, dtype=float))
    log_y = np.log(np.asarray(times_ms, dtype=float))
    slopes = [
        (log_y[j] - log_y[i]) / (log_t[j] - log_t[i]) for i in range(len(log_t)) for j in range(i + 1, len(log_t))
    ]
    return float(np.median(slopes))


# t(2T)/t(T) = c·(2T)²/(c·T²) = 2²
doubling_factor = 4.0
