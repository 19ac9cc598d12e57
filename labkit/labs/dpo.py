"""Lab ``dpo``: the DPO loss of one preference pair, its gradient, and what it does not promise.

One pair: a chosen answer y_w and a rejected answer y_l, each scored by the policy π_θ and a
frozen reference π_ref as sequence log-probabilities.  With β the preference temperature,

    m = β·[(log π_θ(y_w) − log π_ref(y_w)) − (log π_θ(y_l) − log π_ref(y_l))]
    L = −log σ(m) = log(1 + e^(−m))
    ∂L/∂log π_θ(y_w) = −β·σ(−m),   ∂L/∂log π_θ(y_l) = +β·σ(−m)

The loss only sees the *difference* of the two log-ratios: lowering both answers'
probabilities lowers the loss as long as the rejected one falls further.
"""

import numpy as np

from labkit.core.guards import real_number, real_values
from labkit.labs.common import finite_difference, max_abs_difference, require, require_close
from labkit.labs.masks import ABS_TOLERANCE, RELATIVE_TOLERANCE

#: The source's pair: policy log-probs [chosen, rejected], reference log-probs, β.
POLICY_LOG_PROBS = (-2.0, -3.0)
REFERENCE_LOG_PROBS = (-2.5, -2.5)
BETA = 0.2
#: Plain gradient-descent step size of the lab, and the counterexample's shift of the policy.
STEP_SIZE = 0.1
BOTH_LOWER_SHIFT = (-1.0, -2.0)


def _checked(policy, reference, beta) -> tuple[np.ndarray, np.ndarray, float]:
    """policy, reference: [2] = [chosen, rejected] finite log-probabilities (≤ 0); beta > 0 and finite."""
    pairs = []
    for name, values in (("policy", policy), ("reference", reference)):
        pair = real_values(name, values)
        if pair.shape != (2,):
            raise ValueError(f"{name} must be [2] = [chosen, rejected] log-probabilities, got shape {list(pair.shape)}")
        if not np.all(np.isfinite(pair)) or np.any(pair > 0):
            raise ValueError(f"{name} must be finite log-probabilities (≤ 0), got {pair.tolist()}")
        pairs.append(pair)
    return *pairs, real_number("beta", beta, 0.0, open_low=True, expected="a positive finite number")


def dpo_margin(policy: np.ndarray, reference: np.ndarray, beta: float) -> float:
    """m = β·[(π_w − ref_w) − (π_l − ref_l)] for log-probs ``policy``, ``reference``: [2] = [w, l]."""
    chosen_log_ratio = policy[0] - reference[0]
    rejected_log_ratio = policy[1] - reference[1]
    return float(beta * (chosen_log_ratio - rejected_log_ratio))


def dpo_loss(policy, reference, beta: float = BETA) -> float:
    """L = −log σ(m) = log(1 + e^(−m)) in nats; ``policy``, ``reference``: [2] = [chosen, rejected]."""
    margin = dpo_margin(*_checked(policy, reference, beta))
    return float(np.logaddexp(0.0, -margin))


def dpo_gradient(policy, reference, beta: float = BETA) -> np.ndarray:
    """Analytic ∂L/∂[log π_θ(y_w), log π_θ(y_l)] = [−β·σ(−m), +β·σ(−m)]; returns [2]."""
    policy, reference, beta = _checked(policy, reference, beta)
    margin = dpo_margin(policy, reference, beta)
    pull = -beta / (1.0 + np.exp(margin))  # −β·σ(−m)
    return np.array([pull, -pull])


def run(
    policy=POLICY_LOG_PROBS,
    reference=REFERENCE_LOG_PROBS,
    beta: float = BETA,
    step_size: float = STEP_SIZE,
    shift=BOTH_LOWER_SHIFT,
) -> dict:
    """The source report's ``dpo`` object: loss, analytic vs finite-difference gradient, one descent step,
    the counterexample.  Checks: the two gradients agree; the step and the both-lower shift each lower the loss."""
    policy, reference, beta = _checked(policy, reference, beta)
    step_size = real_number("step_size", step_size, 0, open_low=True, expected="a positive finite number")
    shift = np.asarray(shift, dtype=np.float64)
    if shift.shape != (2,) or not np.all(shift < 0):
        raise ValueError(
            f"shift must be [2] negative log-prob changes (both answers less probable), got {shift.tolist()}"
        )

    def loss_at(log_probs: np.ndarray) -> float:
        return float(np.logaddexp(0.0, -dpo_margin(log_probs, reference, beta)))

    margin = dpo_margin(policy, reference, beta)
    loss = loss_at(policy)
    exact_grad = dpo_gradient(policy, reference, beta)
    fd_grad = finite_difference(loss_at, policy)
    require_close(
        "dpo analytic gradient vs finite difference", exact_grad, fd_grad, atol=ABS_TOLERANCE, rtol=RELATIVE_TOLERANCE
    )

    stepped = loss_at(policy - step_size * exact_grad)
    require(stepped < loss, f"dpo: one gradient step should lower the loss {loss!r}, got {stepped!r}")
    counterexample = loss_at(policy + shift)
    require(
        counterexample < loss,
        f"dpo: lowering both answers ({shift.tolist()}) should still lower the loss {loss!r}, got {counterexample!r}",
    )
    return {
        "policy_log_probs": policy.tolist(),
        "reference_log_probs": reference.tolist(),
        "beta": beta,
        "margin": margin,
        "loss_nat": loss,
        "analytic_gradient": exact_grad.tolist(),
        "max_abs_gradient_error": max_abs_difference(exact_grad, fd_grad),
        "loss_after_gradient_step": stepped,
        "both_probabilities_lower_counterexample_loss": counterexample,
    }
