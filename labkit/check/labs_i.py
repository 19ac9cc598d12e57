"""The public checks of chapter 11's labs 01–03 and 06 (04–05, the KV cache: ``labs_i_cache``): a gradient
equals the finite differences of its loss (the CE, log-softmax and DPO variants); a mask keeps its invariants;
attention rows are distributions with the log-odds the bias sets. The predictions' answers are the labs' own
runs; references and hidden cases are the teacher's key.
"""

import numpy as np

from labkit.check.core import attach, properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, NotAttempted, as_array, call, failure, unpack
from labkit.labs import dpo, masks
from labkit.labs.common import finite_difference, log_softmax, masked_cross_entropy
from labkit.nn import attention

FD_ATOL = 1e-6  # central differences at h = 1e-5: truncation ~1e-11, rounding ~ε·|L|/h ≤ 1e-7 here

# --- 01: predictions, the weighted CE gradient, the log-softmax backward -----------------------


def _uniform_row():
    return masked_cross_entropy(np.zeros((1, 3)), np.array([0]), np.array([True]))


@value
def uniform_row_loss() -> float:
    return float(_uniform_row()[0])


@value
def uniform_row_gradient() -> list[float]:
    return [float(g) for g in _uniform_row()[1][0]]


def weighted_cross_entropy(logits, targets, weights) -> float:
    """L = Σ_n w_n·(−log softmax(z_n)[y_n]) / Σ_n w_n: logits [N, V], targets [N] int, weights [N] ≥ 0."""
    picked = log_softmax(np.asarray(logits, dtype=np.float64))[np.arange(len(targets)), targets]
    w = np.asarray(weights, dtype=np.float64)
    return float(-(w @ picked) / w.sum())


def _against_finite_differences(candidate, cases, loss):
    """The first case and element where ``candidate(*args)`` misses the central differences of ``loss``."""
    for label, args in cases:
        point = args[0]
        copies = (a.copy() if isinstance(a, np.ndarray) else a for a in args)
        try:
            got = as_array(call(candidate, *copies), "gradient", shape=point.shape, dtype_kind="number")
        except NotAttempted:
            raise
        except CandidateProblem as problem:
            raise CandidateProblem(say("case “{label}”: {problem}", label=label, problem=problem)) from None
        numeric = finite_difference(lambda z, rest=args[1:]: loss(z, *rest), point)
        bad = np.argwhere(~(np.abs(got - numeric) <= FD_ATOL))
        if bad.size:
            index = tuple(int(i) for i in bad[0])
            message = say("your gradient disagrees with the loss's finite differences")
            where = say("case “{label}”, {what}{index}", label=label, what="gradient", index=list(index))
            rule = say("central differences of the loss, within ±{FD_ATOL:g}", FD_ATOL=FD_ATOL)
            return failure(message, where=where, rule=rule, got=got[index].item())
    return None


@properties()
def masked_ce_gradient(candidate):
    seeded = np.random.default_rng(masks.MASKED_SEED).normal(size=(3, 4)), np.array(masks.MASKED_TARGETS)
    lab_row = np.array([[np.log(2.0), 0.0, 0.0]])
    thousands = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]])
    by_length = np.random.default_rng(7).normal(0.0, 2.0, size=(4, 5)), np.array([4, 0, 2, 1])
    cases = [
        ("the lab's row z = [ln 2, 0, 0], target 2, weight 1", (lab_row, np.array([2]), np.array([1.0]))),
        ("the seeded [3, 4] batch, weights [0.5, 0, 2]", (*seeded, np.array([0.5, 0, 2]))),
        ("logits in the thousands, weights [1, 3]", (thousands, np.array([0, 2]), np.array([1.0, 3.0]))),
        ("sequences of 1 and 3 tokens, each weighted 1/length", (*by_length, np.array([1.0, *[1 / 3] * 3]))),
    ]
    found = _against_finite_differences(candidate, cases, weighted_cross_entropy)
    if found is None:  # a row of weight 0 takes no part in the loss: its gradient is exactly 0
        got = np.asarray(call(candidate, *cases[1][1]))
        if np.any(got[1] != 0.0):
            where = say("case “{cases}”, gradient[1]", cases=cases[1][0])
            rule = say("exactly 0, not nearly")
            return failure(say("a row of weight 0 moved"), where=where, rule=rule, got=got[1].tolist())
    return found


def faulty_log_softmax_grad(z, upstream):
    """∂/∂z of Σ upstream·log softmax(z) over the last axis, z, upstream [N, V] → [N, V] — with a fault:
    find the first row where it diverges, then fix it."""
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    p = np.exp(shifted) / np.sum(np.exp(z), axis=-1, keepdims=True)  # softmax(z)
    return upstream - p * np.sum(upstream, axis=-1, keepdims=True)  # u − p·Σu


def _upstream_loss(z, upstream) -> float:
    return float(np.sum(upstream * log_softmax(z)))


@properties()
def fixed_log_softmax_grad(candidate):
    spread = np.random.default_rng(12).normal(0.0, 3.0, size=(2, 5))
    lab_row, thousands = np.array([[np.log(2.0), 0, 0]]), np.array([[1000.0, 0, -1000], [0, 800, 0]])
    cases = [
        ("a row whose largest logit is 0", (np.array([[0.0, -1.0, -2.0]]), np.array([[1.0, 0.5, -2.0]]))),
        ("the lab's row z = [ln 2, 0, 0], upstream −onehot(2)", (lab_row, np.array([[0, 0, -1.0]]))),
        ("logits in the thousands", (thousands, np.array([[0.5, -1, 2], [1, 1, -3.0]]))),
        ("a [2, 5] batch, every upstream entry non-zero", (spread, np.random.default_rng(13).normal(size=(2, 5)))),
    ]
    return _against_finite_differences(candidate, cases, _upstream_loss)


# --- 02: the sliding-window mask, a prediction ------------------------------------------------


@value
def packed_zero_predictions() -> int:
    return int(np.sum(~masks.packing_prediction_mask([0, 0, 1, 1, 1, 2, 2, 2])))


def _window_problem(allowed, ids, window):
    """(where, rule, got) of the first invariant of a sliding-window document mask ``allowed`` breaks."""
    i, j = np.indices(allowed.shape)
    for broken, rule in (
        (allowed & (j > i), say("no key in the future")),
        (allowed & (ids[:, None] != ids[None, :]), say("no key of another document")),
        (allowed & (i - j >= window), say("a key at distance ≥ window is outside the band")),
    ):
        if broken.any():
            a, b = (int(x) for x in np.argwhere(broken)[0])
            return f"allowed[{a}, {b}]", rule, True
    start = np.array([int(np.flatnonzero(ids == ids[t])[0]) for t in range(ids.size)])  # first token of t's document
    wanted = np.minimum(window, np.arange(ids.size) - start + 1)
    short = np.flatnonzero(allowed.sum(axis=1) != wanted)
    if short.size:
        row = int(short[0])
        rule = say("a row keeps min(window, its place in its document + 1) keys")
        return say("row {row}", row=row), rule, int(allowed[row].sum())
    return None


def _in_case(message: str, label: str, found):
    """The failure ``message`` of case ``label`` at ``found`` = (where, rule, the reader's value)."""
    where, rule, got = found
    return failure(message, where=say("case “{label}”, {where}", label=label, where=where), rule=rule, got=got)


@properties()
def sliding_window_mask(candidate):
    cases = [
        ("the lab's two documents, window 2", (np.array([0, 0, 0, 0, 1, 1, 1, 1]), 2)),
        ("one long document, window 3", (np.zeros(7, dtype=int), 3)),
        ("window 1: only itself", (np.array([4, 4, 5, 5, 5]), 1)),
        ("a window wider than the row", (np.array([0, 1, 1, 1, 2, 2]), 10)),
    ]
    for label, (ids, window) in cases:
        got = as_array(call(candidate, ids.copy(), window), "allowed", shape=(ids.size, ids.size), dtype_kind="bool")
        found = _window_problem(got, ids, window)
        if found is not None:
            return _in_case(say("the mask breaks an invariant"), label, found)
    return None


# --- 03: causal attention with an ALiBi bias, a prediction ------------------------------------


def _alibi_problem(output, weights, q, k, v, slope):
    """(where, rule, got) of the first property of causal ALiBi attention the result breaks."""
    t = q.shape[0]
    future = np.triu(np.ones((t, t), dtype=bool), k=1)
    checks = (
        ("weights", weights < 0, say("weights are never negative")),
        ("weights", np.abs(weights.sum(axis=1) - 1.0)[:, None] > 1e-12, say("each row of weights sums to 1")),
        ("weights", future & (weights != 0.0), say("no weight, not even a tiny one, on a future key")),
        ("output", np.abs(output - weights @ v) > 1e-12 * max(1.0, float(np.abs(v).max())), "output = weights @ v"),
    )
    for name, broken, rule in checks:
        if broken.any():
            a, b = (int(x) for x in np.argwhere(broken)[0])
            return f"{name}[{a}, {b}]", rule, weights[a].tolist()
    # log w_ij − log w_ii = q_i·(k_j − k_i)/√d_h − slope·(i − j) for every visible key j
    i, j = np.indices((t, t))
    law = (q @ k.T - np.sum(q * k, axis=1)[:, None]) / np.sqrt(q.shape[1]) - slope * (i - j)
    with np.errstate(divide="ignore"):
        seen = np.log(weights) - np.log(np.diag(weights))[:, None]
    visible = ~future & (weights > 1e-250) & (np.diag(weights) > 1e-250)[:, None]  # where neither weight underflowed
    off = visible & (np.abs(seen - law) > 1e-9)
    if off.any():
        a, b = (int(x) for x in np.argwhere(off)[0])
        rule = "log w_ij − log w_ii = (q_i·k_j − q_i·k_i)/√d_h − slope·(i − j)"
        return f"weights[{a}, {b}]", rule, float(weights[a, b])
    return None


@properties()
def alibi_causal_attention(candidate):
    x = np.random.default_rng(4).normal(size=(5, 4))
    pushed = x.copy()
    pushed[3:] += 100.0
    wide = np.random.default_rng(5).normal(0.0, 1.5, size=(3, 6, 8))
    hand = (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 4.0]]))
    flat = np.zeros((6, 4))
    cases = [
        ("the hand example as row 1 of two tokens, slope 0", (*hand, 0.0)),
        ("the lab's five seeded tokens (q = k = v = x), slope 0.5", (x, x, x, 0.5)),
        ("the same five, positions ≥ 3 pushed by +100, slope 0.5", (pushed, pushed, pushed, 0.5)),
        ("six tokens, d_h = 8, separate q, k, v, slope 0.25", (*wide, 0.25)),
        ("q = k = 0 (every score 0), slope 0.7", (flat, flat, np.arange(24.0).reshape(6, 4), 0.7)),
    ]
    for label, (q, k, v, slope) in cases:
        got = unpack(call(candidate, q.copy(), k.copy(), v.copy(), slope), ("output", "weights"))
        output = as_array(got[0], "output", shape=v.shape, dtype_kind="number")
        weights = as_array(got[1], "weights", shape=(q.shape[0], q.shape[0]), dtype_kind="number")
        found = _alibi_problem(output, weights, q, k, v, slope)
        if found is not None:
            return _in_case(say("the attention breaks a property"), label, found)
    return None


@value
def scaled_query_weight() -> float:
    q, k = np.array([[[10.0, 0.0]]]), np.array([[[1.0, 0.0], [0.0, 1.0]]])
    v = np.array([[[2.0, 0.0], [0.0, 4.0]]])
    return float(attention(q, k, v, np.ones((1, 2), dtype=bool))[1][0, 0, 0])


# --- 06: a prediction in words, the smoothed DPO gradient ------------------------------------

WORDS = {
    "rises": {"goes up", *"rise rises rising rose up increase increases increasing higher grows".split()},
    "falls": {"goes down", *"fall falls falling fell down decrease decreases decreasing lower drops".split()},
}


def _direction(word: str, expected: str) -> str | None:
    """None when ``word`` (folded to lower case) is a form of ``expected``; else what is wrong."""
    said = next((key for key, forms in WORDS.items() if word.strip(" .!\"'") in forms), None)
    if said is None:
        raise CandidateProblem(say("answer with a direction, 'rises' or 'falls', got {word!r}", word=word))
    return None if said == expected else say("the other direction")


@value
def dpo_loss_when_beta_doubles() -> str:
    loss = [dpo.dpo_loss(dpo.POLICY_LOG_PROBS, dpo.REFERENCE_LOG_PROBS, dpo.BETA * f) for f in (1.0, 2.0)]
    return "rises" if loss[1] > loss[0] else "falls"


attach("dpo_loss_when_beta_doubles", agree=_direction)


def smoothed_dpo_loss(policy, reference, beta: float, smoothing: float) -> float:
    """L = −(1 − ε)·log σ(m) − ε·log σ(−m), m the DPO margin of ``policy``, ``reference`` [2] = [w, l]."""
    margin = dpo.dpo_margin(np.asarray(policy, dtype=np.float64), np.asarray(reference, dtype=np.float64), beta)
    return float((1.0 - smoothing) * np.logaddexp(0.0, -margin) + smoothing * np.logaddexp(0.0, margin))


@properties()
def smoothed_dpo_gradient(candidate):
    lab = (np.array(dpo.POLICY_LOG_PROBS), np.array(dpo.REFERENCE_LOG_PROBS))
    other = (np.array([-1.0, -2.0]), np.array([-1.5, -1.5]))
    cases = [
        ("the lab's pair, β = 0.2, ε = 0 (plain DPO)", (*lab, 0.2, 0.0)),
        ("the lab's pair, β = 0.2, ε = 0.1", (*lab, 0.2, 0.1)),
        ("[−1, −2] against [−1.5, −1.5], β = 0.5, ε = 0.25", (*other, 0.5, 0.25)),
        ("a wrongly ranked pair [−4, −1], β = 1, ε = 0.3", (np.array([-4.0, -1.0]), np.array([-2.0, -2.0]), 1.0, 0.3)),
    ]
    return _against_finite_differences(candidate, cases, smoothed_dpo_loss)
