"""Supplement ``unequal_rank_gradients``: averaging per-rank means is not the global token mean.

Data-parallel training averages gradients across R ranks.  If each rank first divides its
gradient sum S_r by its own token count n_r, the all-reduce computes

    naive  = (1/R) Σ_r S_r / n_r
    global = Σ_r S_r / Σ_r n_r           (what one big batch would give)

which differ as soon as the ranks hold different numbers of supervised tokens.  Scaling each
rank's sum by R / N (N = Σ n_r) before the averaging all-reduce recovers the global mean.

The model is one scalar logistic regression with every feature equal to 1: p = σ(w), per-token
gradient p − y, loss L(w) = −(1/N) Σ [y·log p + (1 − y)·log(1 − p)].
"""

import numpy as np

from labkit.core.guards import real_number, real_values
from labkit.labs.common import require, require_close

#: Targets per rank: rank 0 holds two tokens with y = 1, rank 1 six tokens with y = 0.
RANK_TARGETS = ((1.0, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
LEARNING_RATE = 0.4
START_W = 0.0
SCOPE = "one scalar logistic-regression step, not a multigpu execution"


def sigmoid(w: float) -> float:
    """σ(w) = 1 / (1 + e^(−w))."""
    return float(1 / (1 + np.exp(-w)))


def global_loss(w: float, rank_targets) -> float:
    """L(w) in nats over every token of every rank (all features 1, so p = σ(w) for each token)."""
    p = sigmoid(w)
    y = np.concatenate([np.asarray(t, dtype=np.float64) for t in rank_targets])
    positives = int(np.count_nonzero(y == 1))
    negatives = y.size - positives
    return float(-(positives * np.log(p) + negatives * np.log1p(-p)) / y.size)


def _targets(rank_targets) -> list[np.ndarray]:
    ranks = [real_values(f"rank_targets[{r}]", t) for r, t in enumerate(rank_targets)]
    if len(ranks) < 2:
        raise ValueError(f"rank_targets needs at least 2 ranks, got {len(ranks)}")
    for r, t in enumerate(ranks):
        if t.ndim != 1 or t.size == 0:
            raise ValueError(f"rank {r} must hold a non-empty 1-D list of targets, got shape {list(t.shape)}")
        if not np.all((t == 0) | (t == 1)):
            raise ValueError(f"rank {r} targets must be 0 or 1, got {t.tolist()}")
    return ranks


def run(rank_targets=RANK_TARGETS, learning_rate: float = LEARNING_RATE, w: float = START_W) -> dict:
    """The source report's ``unequal_rank_gradients`` object.  Checks: the compensated all-reduce equals
    the global token mean; one step along it lowers the global loss."""
    ranks = _targets(rank_targets)
    learning_rate = real_number("learning_rate", learning_rate, 0, open_low=True, expected="a positive finite number")
    p = sigmoid(w)
    counts = np.array([t.size for t in ranks])  # n_r
    sums = np.array([np.sum(p - t) for t in ranks])  # S_r = Σ (p − y)
    world = len(ranks)  # R
    rank_means = sums / counts  # S_r / n_r
    naive = float(np.mean(rank_means))  # mean over ranks of S_r / n_r
    global_mean = float(sums.sum() / counts.sum())  # Σ S_r / Σ n_r
    compensated = sums * world / counts.sum()  # S_r · R / N, then all-reduce mean
    all_reduced = float(np.mean(compensated))
    require_close(
        "unequal_rank: compensated all-reduce vs global token mean", all_reduced, global_mean, atol=1e-15, rtol=1e-12
    )

    new_w = w - learning_rate * global_mean
    old_loss = global_loss(w, ranks)
    loss_after = global_loss(new_w, ranks)
    naive_loss = global_loss(w - learning_rate * naive, ranks)
    # a descent step on this convex loss lowers it, unless the step is too small to show in float64
    tiny_step = abs(learning_rate * global_mean) < 1e-6
    require(
        loss_after < old_loss or (tiny_step and loss_after <= old_loss),
        f"unequal_rank: a step along the global mean should lower the loss {old_loss!r}, got {loss_after!r}",
    )
    return {
        "rank_token_counts": counts.tolist(),
        "rank_gradient_sums": sums.tolist(),
        "rank_mean_gradients": rank_means.tolist(),
        "naive_average": naive,
        "global_token_average": global_mean,
        "compensated_local_gradients": compensated.tolist(),
        "ddp_average_after_compensation": all_reduced,
        "learning_rate": learning_rate,
        "old_w": w,
        "correct_new_w": new_w,
        "new_probability": sigmoid(new_w),
        "old_global_loss": old_loss,
        "correct_new_global_loss": loss_after,
        "naive_new_global_loss": naive_loss,
        "scope": SCOPE,
    }
