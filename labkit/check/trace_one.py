"""The public checks of the preface and trace one (pages 00–03): what a right answer must satisfy, with no
stored answer inside; the predictions' answers are the real kernels' runs. The teacher's key adds hidden cases.
"""

import numpy as np

from labkit.check.core import properties, value
from labkit.check.feedback import say
from labkit.check.grading import CandidateProblem, as_array, call, compare_traces, failure
from labkit.check.trace_one_decode import cached_equals_full, decode_step, without_ledger
from labkit.core.events import read_golden
from labkit.nn import rms_norm
from labkit.text.model import CONFIG
from labkit.text.processors import SamplingConfig
from labkit.text.runtime import TextTraceConfig, run_text_trace
from labkit.trace import catalogue, kinds

# -- predictions (self-tests: the page's next cell shows the run) ------------------------------------


@value
def rms_norm_row() -> float:
    return float(rms_norm(np.array([[3.0, 4.0, 0.0, 0.0]]), 1e-6)[0, 0])


@value
def eos_in_control_step() -> int:
    """The first logical step whose selected token differs from the golden run's."""
    golden_run = [e for e in read_golden("text.jsonl") if e["event_type"] == "token.selected"]
    faulty = [e for e in kinds.run_kind("text", "eos_in_control_mask").events if e["event_type"] == "token.selected"]
    pairs = zip(golden_run, faulty, strict=False)
    return next(a["logical_step"] for a, b in pairs if a["payload"]["token_id"] != b["payload"]["token_id"])


@value
def eos_fault_first_event() -> str:
    """The first event of the fault's run that differs from the golden trace."""
    divergence = catalogue.diagnose("text", "eos_before_minimum_length")
    return (divergence.event_b or divergence.event_a)["event_id"]


# -- cut_off_events (page 01, diagnose) ----------------------------------------------------------------


def damaged_trace(*links: tuple[str, str | None]) -> list[dict]:
    """A trace of envelopes (event ID, parent ID), every other field fixed."""
    fields = {"trace_id": "trace-x", "component": "c", "event_type": "a.b", "logical_step": None, "payload": {}}
    return [{**fields, "event_id": e, "parent_event_id": p} for e, p in links]


def damaged_traces() -> list[tuple[str, list[dict]]]:
    """The public cases: traces whose parent links were damaged in transit (no answers here)."""
    return [
        ("a well-formed tree", damaged_trace(("e00", None), ("e01", "e00"), ("e02", "e00"), ("e03", "e01"))),
        ("a parent that points forward", damaged_trace(("e00", None), ("e01", "e02"), ("e02", "e00"))),
        ("a lost parent with a child", damaged_trace(("e00", None), ("e01", "e09"), ("e02", "e01"), ("e03", "e00"))),
        ("a second root and its branch", damaged_trace(("e00", None), ("e01", None), ("e02", "e01"), ("e03", "e02"))),
        ("two events naming each other", damaged_trace(("e00", None), ("e01", "e02"), ("e02", "e01"), ("e03", "e02"))),
    ]


def _cut_off_verdict(label: str, trace: list[dict], got) -> object | None:
    """None when ``got`` keeps a valid trace and every cut event has a cause; else the failure."""
    ids = [e["event_id"] for e in trace]
    if not isinstance(got, list | tuple) or any(not isinstance(i, str) for i in got):
        raise CandidateProblem(say("return a list of event IDs (strings), got {kind}", kind=type(got).__name__))
    cut = list(got)
    where = say("case “{label}”", label=label)
    if [i for i in ids if i in cut] != cut:
        message = say("your list is not a list of the trace's IDs in trace order")
        return failure(message, where=where, rule=say("each ID once, an ID of the trace, in trace order"), got=cut)
    seen: set[str] = set()
    for index, event in enumerate(trace):
        me, parent = event["event_id"], event["parent_event_id"]
        linked = parent is None if index == 0 else parent in seen
        at = say("{where}, {me}", where=where, me=me)
        if me not in cut and not linked:
            message = say("an event you keep is not connected to the first event")
            rule = say("every event you keep hangs from an earlier event you keep (the first event from none)")
            return failure(message, where=at, rule=rule, got=cut)
        if me in cut and linked:
            message = say("you cut an event whose parent is an earlier event you keep")
            rule = say("an event is cut only if its own link is broken or it hangs from a cut event")
            return failure(message, where=at, rule=rule, got=cut)
        if me not in cut:  # kept and linked; a cut event is unlinked, as it should be
            seen.add(me)
    return None


@properties()
def cut_off_events(candidate):
    for label, trace in damaged_traces():
        found = _cut_off_verdict(label, trace, call(candidate, [dict(e) for e in trace]))
        if found is not None:
            return found
    return None


# -- no_repeat_ngram_mask (page 02, extend) ----------------------------------------------------------------


def _repeats(tokens: tuple[int, ...], n: int) -> bool:
    """Whether some n-gram occurs twice in ``tokens`` (the property, checked the slow way)."""
    grams = [tokens[i : i + n] for i in range(len(tokens) - n + 1)]
    return len(grams) != len(set(grams))


def _ngram_verdict(label: str, logits: np.ndarray, selected: tuple[int, ...], n: int, got) -> object | None:
    """A new row of the input's dtype, unchanged or −∞ at each token, −∞ where appending repeats an n-gram."""
    row = as_array(got, say("the returned logits"), shape=logits.shape, dtype_kind="float")
    if row.dtype != logits.dtype:
        text = "the returned row must keep the logits' dtype {dtype}, got {dtype2}"
        raise CandidateProblem(say(text, dtype=logits.dtype, dtype2=row.dtype))
    for token in range(logits.size):
        repeats = not _repeats(selected, n) and _repeats((*selected, token), n)
        should = -np.inf if repeats else logits[token]
        if row[token] != should and not (np.isneginf(row[token]) and np.isneginf(should)):
            rule = say("−∞ where the token would complete an n-gram already selected, the logit itself elsewhere")
            where = say("case “{label}”, result[{token}]", label=label, token=token)
            return failure(say("your row differs from the masking rule"), where=where, rule=rule, got=float(row[token]))
    return None


def ngram_cases() -> list[tuple[str, tuple]]:
    """Public (logits, selected so far, n) cases; no answers."""
    row = np.linspace(3.0, -1.0, 12, dtype=np.float32)
    masked = row.copy()
    masked[[2, 5]] = -np.inf
    return [
        ("n = 2 after 3 4 3", (row, (3, 4, 3), 2)),
        ("n = 1: no token twice", (row, (7, 2, 9), 1)),
        ("n = 3, the tail 5 6 seen twice", (row, (5, 6, 1, 5, 6, 2, 5, 6), 3)),
        ("n = 3, fewer tokens than n − 1", (row, (4,), 3)),
        ("n = 2, entries already −∞", (masked, (2, 8, 2), 2)),
        ("n = 2, float64 logits", (row.astype(np.float64), (1, 1), 2)),
    ]


def looping_request(n: int):
    """Trace one made to go on for 12 tokens (it then loops: 10 17 10 17 …) with the reader's mask in
    the repetition slot: (config, hooked run)."""
    config = TextTraceConfig(max_output_tokens=12, sampling=SamplingConfig(minimum_output_tokens=12))
    run = kinds.kind("text")

    def with_mask(mask):
        hooks = run.hooks(
            processors={"repetition_transforms": lambda logits, context: mask(logits, context.selected_so_far, n)}
        )
        return run.run(config, hooks).events

    return config, with_mask


def _looping_verdict(candidate, n: int) -> object | None:
    """Inside the runtime: each step masks the control tokens, EOS while too early and the repeats."""
    config, with_mask = looping_request(n)
    selected: list[int] = []
    for event in with_mask(lambda logits, chosen, size: call(candidate, logits.copy(), tuple(chosen), size)):
        if event["event_type"] != "token.selected":
            continue
        base = set(config.sampling.control_ids) | ({config.sampling.eos_id} if len(selected) < 12 else set())
        fresh = not _repeats(tuple(selected), n)
        wanted = sorted(base | {t for t in range(CONFIG.vocab_size) if fresh and _repeats((*selected, t), n)})
        if event["payload"]["masked_ids"] != wanted:
            text = "{event} token.selected (step {event2}), field masked_ids — n = {n}"
            where = say(text, event=event["event_id"], event2=event["logical_step"], n=n)
            message = say("inside the runtime your mask hides other tokens")
            return failure(message, where=where, rule=say("discrete_state"), got=event["payload"]["masked_ids"])
        selected.append(event["payload"]["token_id"])
    return None


@properties()
def no_repeat_ngram_mask(candidate):
    for label, (logits, selected, n) in ngram_cases():
        before = logits.copy()
        got = call(candidate, logits, selected, n)
        if not np.array_equal(logits, before):
            text = "your function changed the logits it was given; return a new row (start from logits.copy())"
            raise CandidateProblem(say(text))
        found = _ngram_verdict(label, logits, selected, n, got)
        if found is not None:
            return found
    return _looping_verdict(candidate, 2)


# -- largest_min_p (page 02, extend) ----------------------------------------------------------------------


def survivors(logits: np.ndarray, min_p: float) -> int:
    """How many tokens min-p keeps: p_i ≥ min_p · p_max, i.e. z_i − z_max ≥ ln min_p."""
    z = np.asarray(logits, dtype=np.float64)
    return int(np.count_nonzero(z - np.max(z) >= np.log(min_p)))


def min_p_cases() -> list[tuple[str, tuple]]:
    """Public (logits, k) cases; no answers."""
    rng = np.random.default_rng(31)
    return [
        ("seeded logits [16], k = 4", (rng.normal(size=16) * 3, 4)),
        ("logits in the thousands, k = 3", (np.array([1000.0, 999.5, 990.0, 1000.0, 985.0]), 3)),
        ("k = 1", (np.array([0.3, 2.0, -1.0]), 1)),
        ("a tie at the k-th place", (np.array([2.0, 1.0, 1.0, -0.5]), 2)),
        ("entries already −∞, k = 3", (np.array([0.0, -np.inf, -0.5, -3.0, -np.inf]), 3)),
    ]


@properties()
def largest_min_p(candidate):
    for label, (logits, k) in min_p_cases():
        got = call(candidate, logits.copy(), k)
        if isinstance(got, bool | np.bool_) or not isinstance(got, int | float | np.number | np.ndarray):
            raise CandidateProblem(say("return one number (a min_p in (0, 1]), got {kind}", kind=type(got).__name__))
        m = float(np.asarray(got, dtype=np.float64).reshape(()))
        where = say("case “{label}”", label=label)
        if not 0.0 < m <= 1.0:
            return failure(say("a min_p lies in (0, 1]"), where=where, rule=say("0 < min_p ≤ 1"), got=m)
        if survivors(logits, m * (1 - 1e-9)) < k:
            message = say("min-p at your value keeps fewer than k tokens")
            return failure(message, where=where, rule=say("at least k tokens kept"), got=m)
        if m < 1 - 1e-9 and survivors(logits, min(1.0, m * (1 + 1e-9))) >= k:
            rule = say("the largest such min_p: a little above it, fewer than k tokens stay")
            return failure(say("a larger min_p still keeps k tokens"), where=where, rule=rule, got=m)
    return None


# -- decode_one (page 03, extend) -------------------------------------------------------------------------


@properties(hook=decode_step)
def decode_one(step):
    # the question without its "?": 11 input IDs, so the first decode feeds at 11
    shorter = TextTraceConfig(user="天空为什么是蓝色", max_output_tokens=6)
    runs = [
        ("the chapter's request vs the golden trace", read_golden("text.jsonl"), None),
        ("the question without its question mark (11 input IDs) vs the library's run", None, shorter),
    ]
    for label, expected, config in runs:
        text = kinds.kind("text")
        expected = expected or run_text_trace(config).events
        events = text.run(config or text.config(), text.hooks(decode_step=step)).events
        found = compare_traces(label, without_ledger(expected), without_ledger(events))
        if found is not None:
            return found
    return cached_equals_full(step)
