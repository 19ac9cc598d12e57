"""The public checks of chapter 11's pages 10–13 (the bandwidth bound, unequal ranks, the reports, measuring):
properties tested against the labs' own code, no stored answer; the predictions' answers are the labs' runs.
"""

import copy
from dataclasses import asdict
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, NotAttempted, as_array, call, failure
from labkit.check.labs_ii import close, number
from labkit.labs import MIN_SAMPLES, unequal_rank
from labkit.labs import report as reports
from labkit.labs.bandwidth import DecodeBudget
from labkit.labs.common import require

# --- 10 the bandwidth budget ------------------------------------------------------------------------


def layout(budget: DecodeBudget) -> SimpleNamespace:
    """A budget's numbers as plain fields, without ``context`` (each request brings its own)."""
    return SimpleNamespace(**{k: v for k, v in asdict(budget).items() if k != "context"})


QUANTISED = DecodeBudget(bytes_per_param=1, kv_bytes_per_element=1)


@properties()
def decode_step_lower_bound_ms(piece):
    """One request alone gets the lab's bound (``DecodeBudget.step(1)``); a batch reads the weights once:
    its bound is the requests' own bounds added, less the weights' time for every request but one."""
    small = DecodeBudget(1_500_000_000, n_layers=28, n_kv_heads=2, bandwidth_bytes_per_second=2 * 10**12)
    cases = [
        ("the source's 7B layout", DecodeBudget(), (8192, 1024, 100, 8192)),
        ("one byte per weight and per cache element", QUANTISED, (8192,) * 8),
        ("32 KV heads instead of 8", DecodeBudget(n_kv_heads=32), (4096, 16, 32_768)),
        ("a 1.5B model, 28 layers, 2 KV heads, 2 TB/s", small, (32_768, 1, 2048, 512, 777)),
    ]
    for label, budget, contexts in cases:
        alone = []
        for context in sorted(set(contexts)):
            got = number(call(piece, layout(budget), [context]), say("the bound"))
            lab = DecodeBudget(**{**asdict(budget), "context": context}).step(1)["lower_bound_ms"]
            if not close(got, lab, 1e-9 * lab):
                where = say("{label}, [{context}]", label=label, context=context)
                return failure(say("one request's bound differs from the lab's"), where=where, got=got)
            alone.append((context, got))
        weights_ms = budget.weight_bytes / budget.bandwidth_bytes_per_second * 1000
        batch = sum(dict(alone)[c] for c in contexts) - (len(contexts) - 1) * weights_ms
        got = number(call(piece, layout(budget), list(contexts)), say("the bound"))
        if not close(got, batch, 1e-9 * batch):
            where = say("{label}, contexts {contexts}", label=label, contexts=list(contexts))
            return failure(say("the batch does not read the weights once and each cache once"), where=where, got=got)
    return None


@value
def quantised_batch8_ms() -> float:
    return float(QUANTISED.step(8)["lower_bound_ms"])


# --- 11 unequal ranks --------------------------------------------------------------------------------


@properties()
def loss_scale_factors(piece):
    """For any per-token gradients, the averaged, accumulated update of the scaled micro-batch means is
    the mean over every token of every rank (many random gradient sums per grid)."""
    cases = [
        ("the lab's ranks: 2 and 6 tokens, one micro-batch each", [[2], [6]]),
        ("two ranks, three micro-batches each", [[3, 1, 4], [1, 5, 9]]),
        ("four ranks of 5 tokens", [[5], [5], [5], [5]]),
        ("one rank, four micro-batches (accumulation alone)", [[2, 7, 1, 8]]),
        ("three ranks of 1, 4 and 7 tokens, two micro-batches", [[1, 1], [4, 3], [7, 2]]),
    ]
    for label, counts in cases:
        n = np.array(counts, dtype=np.float64)
        factors = as_array(call(piece, np.array(counts)), "factors", n.shape, dtype_kind="number")
        sums = np.random.default_rng(int(n.sum())).normal(size=(n.size + 1, *n.shape))  # [draws, R, M]
        update = np.mean(np.sum(factors * sums / n, axis=-1), axis=-1)  # Σ over micro-batches, mean over ranks
        token_mean = sums.sum(axis=(1, 2)) / n.sum()
        bad = np.flatnonzero(~np.isclose(update, token_mean, rtol=1e-12, atol=1e-12))
        if bad.size:
            text = "case “{label}”, random gradient sums no. {bad}: the update against the token mean"
            where = say(text, label=label, bad=bad[0])
            return failure(say("the update is not the mean over every token"), where=where, got=update[bad[0]])
    return None


@value
def moved_token_naive_average() -> float:
    return float(unequal_rank.run(rank_targets=((1.0,), (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)))["naive_average"])


# --- 12 the reports ----------------------------------------------------------------------------------

#: what a well-formed report's problems are, and what a damaged one's must be when no key is at fault
NONE, SOME = [], "at least one problem"


@lru_cache(maxsize=1)
def real_reports() -> tuple[dict, dict, dict]:
    """(passed labs report, failed labs report, fault-injection report), built by labkit."""
    good = reports.labs_report(samples=MIN_SAMPLES)

    def fails():
        require(False, "masks: a stand-in check that fails")

    stand_ins = {"ce_gradient": lambda: good["labs"]["ce_gradient"], "masks": fails}
    return good, reports.labs_report(samples=MIN_SAMPLES, runners=stand_ins), reports.faults_report()


def damaged(report: dict, change) -> dict:
    out = copy.deepcopy(report)
    change(out)
    return out


class Raised(str):
    """What the reader's function raised, as its answer (a damaged report deserves problems, not a crash)."""


def problems_of(candidate):
    """The reader's validator: a list of strings, or what it raised."""

    def piece(report):
        try:
            problems = call(candidate, copy.deepcopy(report))
        except CandidateProblem as problem:
            if isinstance(problem, NotAttempted):
                raise
            return Raised(problem)
        if not isinstance(problems, list | tuple) or not all(isinstance(p, str) for p in problems):
            holding = say(" holding non-strings") if isinstance(problems, list | tuple) else ""
            text = "return a list of strings (one per problem, [] for a well-formed report), got {kind}{holding}"
            raise CandidateProblem(say(text, kind=type(problems).__name__, holding=holding))
        return list(problems)

    return piece


def judged(problems, deserved) -> str | None:
    """How the reader's problems miss what the report deserves (None: they do not)."""
    if isinstance(problems, Raised):
        if deserved == NONE:
            raise CandidateProblem(problems)
        return say("a damaged report crashed your function")
    if deserved == NONE:
        return say("a well-formed report was rejected") if problems else None
    if not problems:
        return say("a damaged report passed")
    key = deserved.split("'")[1] if deserved != SOME else None
    return None if key is None or any(key in p for p in problems) else say("the problem does not say where")


@properties(hook=problems_of, agree=judged)
def report_problems(piece):
    """The two real reports pass; a copy damaged at one key gets a problem naming that key."""
    good, failed, faults = real_reports()
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
    rows = [  # (case, (report,), what it deserves)
        ("a real report of a passing run", (good,), NONE),
        ("a real report of a failed run", (failed,), NONE),
        *[(case, (damaged(report, change),), f"a problem naming {key!r}") for case, report, change, key in damages],
        ("the fault-injection report (another format)", (faults,), "a problem naming 'labs'"),
        ("a list instead of a report", ([good],), SOME),
    ]
    for case, (report,), deserved in rows:
        message = judged(piece(report), deserved)
        if message is not None:
            return failure(message, where=say("case “{case}”", case=case), got=piece(report))
    return None


# --- 13 measuring the book ---------------------------------------------------------------------------


@properties()
def growth_exponent(piece):
    """An exact power law gives its exponent, even with a slow run or two among eight; k does not depend on
    the unit of time or of length, nor on the order of the measurements."""
    contexts = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = np.array(contexts, dtype=float)
    ends = np.isin(t, (16, 2048))
    cases = [
        ("a flat curve t = 0.2 ms", 0.0, [0.2] * len(contexts)),
        ("a linear curve t = 0.003·T", 1.0, list(0.003 * t)),
        ("a quadratic curve t = 5e-5·T²", 2.0, list(5e-5 * t**2)),
        ("a T^1.5 curve with one slow run (×10 at T = 256)", 1.5, list(1e-3 * t**1.5 * np.where(t == 256, 10, 1))),
        ("a T^0.7 curve with two slow runs (×3 at the ends)", 0.7, list(0.1 * t**0.7 * np.where(ends, 3, 1))),
    ]
    for label, k, times in cases:
        got = number(call(piece, list(contexts), list(times)), "k")
        if not close(got, k, 1e-9):
            message = say("the exponent of an exact power law is off")
            return failure(message, where=say("case “{label}”", label=label), got=got)
    wobbled = list(1e-3 * np.array(contexts) ** 1.5 * (1.0 + 0.1 * np.sin(np.arange(len(contexts)))))
    base = number(call(piece, list(contexts), wobbled), "k")
    order = [3, 0, 7, 5, 1, 6, 2, 4]
    variants = {
        "times in seconds instead of ms": (list(contexts), [t / 1000 for t in wobbled]),
        "contexts in units of 16 tokens": ([c / 16 for c in contexts], wobbled),
        "the same measurements in another order": ([contexts[i] for i in order], [wobbled[i] for i in order]),
    }
    for label, args in variants.items():
        got = number(call(piece, *args), "k")
        if not close(got, base, 1e-9):
            where = say("a noisy T^1.5 curve, {label}", label=label)
            return failure(say("k changed with the units or the order"), where=where, got=got)
    return None


@value
def doubling_factor() -> float:
    t = np.array([64.0, 128.0])
    cost = 3e-6 * t**2
    return float(cost[1] / cost[0])
