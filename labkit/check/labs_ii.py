"""The exercises of chapter 11's labs 08–13 without a runtime hook; every answer comes from the labs'
own kernels at check time, and a variant's reference is written here, hidden: the kit does not hold it.
"""

from __future__ import annotations

import copy
from dataclasses import asdict
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from labkit.check.core import function, table, value
from labkit.check.grading import CandidateProblem, as_array, call, unpack
from labkit.labs import MIN_SAMPLES, speculative, unequal_rank
from labkit.labs import report as reports
from labkit.labs.bandwidth import DecodeBudget
from labkit.labs.common import require
from labkit.labs.kl import kl_divergence
from labkit.labs.speculative import expected_tokens_per_target_call, speculative_mass

#: the distributions of the KL and speculative pages' hand questions: (p, q)
KL_PAIR = ([0.9, 0.1, 0.0], [0.5, 0.25, 0.25])
DRAFT_PAIR = ([0.5, 0.5, 0.0], [0.2, 0.3, 0.5])


@value
def kl_by_hand() -> float:
    return float(kl_divergence(*KL_PAIR))


@value
def finite_direction() -> str:
    return "pq" if np.isfinite(kl_divergence(*KL_PAIR)) else "qp"


def _logit_pairs():
    return [
        ("seeded logits [8]", (np.random.default_rng(8).normal(size=8), np.random.default_rng(9).normal(size=8))),
        ("equal rows", (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))),
        ("a shifted row: the same distribution", (np.array([0.0, 1.0]), np.array([100.0, 101.0]))),
        ("logits in the thousands", (np.array([1000.0, 990.0, 0.0]), np.array([995.0, 1000.0, 10.0]))),
    ]


@function(_logit_pairs)
def kl_from_logits(z_p, z_q):
    lp, lq = (z - np.max(z) - np.log(np.sum(np.exp(z - np.max(z)))) for z in (z_p, z_q))  # log-softmax, no overflow
    return float(np.sum(np.exp(lp) * (lp - lq)))


def _draft_pairs():
    (_, equal_p, equal_q), (_, disjoint_p, disjoint_q) = speculative.EDGE_CASES
    pairs = {
        "the lab's p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2]": (speculative.TARGET, speculative.DRAFT),
        "draft equal to target": (equal_p, equal_q),
        "disjoint support: p = [0, 0.7, 0.3], q = [0.3, 0.7, 0]": (disjoint_p, disjoint_q),
        "p = [0.5, 0.5, 0], q = [0.2, 0.3, 0.5]": DRAFT_PAIR,
        "six tokens, zeros on both sides": ((0.3, 0.25, 0.0, 0.2, 0.15, 0.1), (0.1, 0.25, 0.3, 0.35, 0.0, 0.0)),
    }
    return [(case, (np.array(p), np.array(q))) for case, (p, q) in pairs.items()]


def _unused_accept_ignored(candidate):
    """α where the draft never proposes (q = 0) is never used, so it is not checked."""

    def piece(p, q):
        accept, residual = unpack(call(candidate, p.copy(), q.copy()), ("accept", "residual"))
        return np.where(q > 0, as_array(accept, "accept", p.shape, dtype_kind="number"), 0.0), residual

    return piece


@function(_draft_pairs, hook=_unused_accept_ignored)
def speculative_parts(p, q):
    """(accept, residual) of the target p verifying a draft from q, accept 0 where q never proposes."""
    mass = speculative_mass(p, q)
    return np.where(q > 0, mass.accept_probability, 0.0), mass.residual


def _rejecting_pairs():
    """The pairs where the first draft can be rejected (p ≠ q): the second draft is then reached."""
    return [(case, args) for case, args in _draft_pairs() if case != "draft equal to target"]


@function(_rejecting_pairs, hook=_unused_accept_ignored)
def second_draft(p, q):
    verify = speculative_parts.reference
    return verify(verify(p, q)[1], q)  # the second draft is verified against the first one's residual


def _draft_mass():
    return speculative_mass(*DRAFT_PAIR)


@value
def rejection_probability() -> float:
    return float(_draft_mass().reject_probability)


@value
def tokens_per_target_call() -> float:
    return float(expected_tokens_per_target_call(1.0 - _draft_mass().reject_probability, 3))


@value
def tokens_at_general_alpha() -> float:
    return float(expected_tokens_per_target_call(0.8, 4))


def _layouts():
    one_byte = DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1)
    small = DecodeBudget(
        1_500_000_000, n_layers=28, context=32_768, n_kv_heads=2, bandwidth_bytes_per_second=2 * 10**12
    )
    layouts = {
        "the source's 7B fp16 layout, batch 1": (DecodeBudget(), 1),
        "the source's 7B fp16 layout, batch 8": (DecodeBudget(), 8),
        "one byte per weight and per cache element, batch 8": (one_byte, 8),
        "32 KV heads instead of 8, batch 8": (DecodeBudget(n_kv_heads=32), 8),
        "a 1.5B model, 28 layers, 2 KV heads, 32 768 tokens, 2 TB/s, batch 64": (small, 64),
    }
    return [(case, (SimpleNamespace(**asdict(budget)), batch)) for case, (budget, batch) in layouts.items()]


@function(_layouts)
def decode_step_lower_bound_ms(budget, batch):
    return DecodeBudget(**vars(budget)).step(batch)["lower_bound_ms"]  # the lab's own bound for that layout


@value
def quantised_batch8_ms() -> float:
    return float(DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1).step(8)["lower_bound_ms"])


#: (case, options of unequal_rank.run): the sums and counts handed over come from the lab's own run
RANK_CASES = (
    ("the lab's ranks: two tokens of target 1, six of target 0, w = 0", {}),
    (
        "one target-1 token moved to rank 1: ranks [1] and [1, 0, 0, 0, 0, 0, 0]",
        {"rank_targets": ((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))},
    ),
    ("the lab's ranks at w = 1.3", {"w": 1.3}),
    ("equal token counts (three each)", {"rank_targets": ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0))}),
    (
        "three ranks of 1, 4 and 7 tokens",
        {"rank_targets": ((1.0,), (0.0, 1.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0))},
    ),
)


def _rank_sums():
    reports = [(case, unequal_rank.run(**options)) for case, options in RANK_CASES]
    return [(case, (np.array(r["rank_gradient_sums"]), np.array(r["rank_token_counts"]))) for case, r in reports]


@function(_rank_sums)
def compensated_local_gradients(rank_gradient_sums, rank_token_counts):
    return rank_gradient_sums * rank_gradient_sums.size / rank_token_counts.sum()  # each rank rescales its sum


@value
def moved_token_naive_average() -> float:
    return float(unequal_rank.run(rank_targets=RANK_CASES[1][1]["rank_targets"])["naive_average"])


#: what a well-formed report's problems are, and what a damaged one's must be when no key is at fault
NONE, SOME = [], "at least one problem"


@lru_cache(maxsize=1)
def _real_reports() -> tuple[dict, dict, dict]:
    """(passed labs report, failed labs report, fault-injection report), built by labkit."""
    good = reports.labs_report(samples=MIN_SAMPLES)

    def fails():
        require(False, "masks: a stand-in check that fails")

    stand_ins = {"ce_gradient": lambda: good["labs"]["ce_gradient"], "masks": fails}
    return good, reports.labs_report(samples=MIN_SAMPLES, runners=stand_ins), reports.faults_report()


def _damaged(report: dict, change) -> dict:
    out = copy.deepcopy(report)
    change(out)
    return out


class _Raised(str):
    """What the reader's function raised, as its answer (a damaged report deserves problems, not a crash)."""


def _problems(candidate):
    """The reader's validator: a list of strings, or what it raised."""

    def piece(report):
        try:
            problems = call(candidate, report)
        except CandidateProblem as problem:
            if "not yet implemented" in str(problem):
                raise
            return _Raised(problem)
        if not isinstance(problems, list | tuple) or not all(isinstance(p, str) for p in problems):
            holding = " holding non-strings" if isinstance(problems, list | tuple) else ""
            raise CandidateProblem(
                "return a list of strings (one per problem, [] for a well-formed report), "
                f"got {type(problems).__name__}{holding}"
            )
        return list(problems)

    return piece


def _judged(problems, expected) -> str | None:
    """How the reader's problems miss what the report deserves (None: they do not)."""
    if isinstance(problems, _Raised):
        if expected == NONE:
            raise CandidateProblem(problems)
        return "a damaged report crashed your function"
    if expected == NONE:
        return "a well-formed report was rejected" if problems else None
    if not problems:
        return "a damaged report passed"
    key = expected.split("'")[1] if expected != SOME else None
    return None if key is None or any(key in p for p in problems) else "the problem does not say where"


@table(hook=_problems, agree=_judged)
def report_problems():
    good, failed, faults = _real_reports()
    damages = [  # (case, the report it damages, the damage, the key at fault)
        ("a passing report without “runtime”", good, lambda r: r.pop("runtime"), "runtime"),
        ("a passing report whose status is “ok”", good, lambda r: r.update(status="ok"), "status"),
        ("a passing report without the kl lab", good, lambda r: r["labs"].pop("kl"), "kl"),
        ("a passing report with an extra top-level key “note”", good, lambda r: r.update(note="x"), "note"),
        ("a passing report whose runtime lacks “dtype”", good, lambda r: r["runtime"].pop("dtype"), "dtype"),
        ("a passing report whose dpo lab is a list", good, lambda r: r["labs"].update(dpo=[0.2]), "dpo"),
        (
            "a passing report whose elapsed_seconds is the string “0.5”",
            good,
            lambda r: r.update(elapsed_seconds="0.5"),
            "elapsed_seconds",
        ),
        ("a passing report that also names a failed_lab", good, lambda r: r.update(failed_lab="kl"), "failed_lab"),
        ("a failed report without “failure”", failed, lambda r: r.pop("failure"), "failure"),
        ("a passing report with an unknown lab “ppo”", good, lambda r: r["labs"].update(ppo={}), "ppo"),
    ]
    return [
        ("a real report of a passing run", (good,), NONE),
        ("a real report of a failed run", (failed,), NONE),
        *[(case, (_damaged(report, change),), f"a problem naming {key!r}") for case, report, change, key in damages],
        ("the fault-injection report (another format)", (faults,), "a problem naming 'labs'"),
        ("a list instead of a report", ([good],), SOME),
    ]


def _curves() -> list[tuple[str, tuple[list[int], list[float]]]]:
    """Exact power laws k = 0, 1, 2 and a deterministically wobbled T^1.5: (label, (T, t in ms))."""
    contexts = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = np.array(contexts, dtype=float)
    wobble = 1.0 + 0.1 * np.sin(np.arange(len(contexts)))  # deterministic "noise"
    curves = {
        "a flat curve t = 0.2 ms": [0.2] * len(contexts),
        "a linear curve t = 0.003·T": list(0.003 * t),
        "a quadratic curve t = 5e-5·T²": list(5e-5 * t**2),
        "a noisy T^1.5 curve": list(1e-3 * t**1.5 * wobble),
    }
    return [(label, (contexts, times)) for label, times in curves.items()]


@function(_curves)
def growth_exponent(contexts, times_ms):
    x, y = np.log(np.asarray(contexts, float)), np.log(np.asarray(times_ms, float))
    design = np.stack([np.ones_like(x), x], axis=1)  # [n, 2]: intercept, slope
    (_, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(slope)


@value
def doubling_factor() -> float:
    contexts = [64, 128, 256, 512]
    return float(2.0 ** growth_exponent.reference(contexts, [3e-6 * t**2 for t in contexts]))
