"""The eight reproduction assertions of §7.5, as checks a page can run on any ``TextRun``.

Each check returns ``(passed, detail)``; ``detail`` says what was found, so a failing
check explains itself.  (The test suite asserts the same facts independently.)
"""

from labkit.text.model import PROMPT_IDS


def _of(run, event_type: str) -> list[dict]:
    return [e for e in run.events if e["event_type"] == event_type]


def input_ids_fixed(run):
    ids = run.input_ids.tolist()[0]
    return ids == list(PROMPT_IDS), f"input IDs {ids}"


def prefill_cache_12(run):
    cache = _of(run, "prefill.completed")[0]["payload"]["cache"]
    lengths = [layer["K"][2] for layer in cache]
    return lengths == [12] * len(cache), f"prefill cache length per layer {lengths}"


def first_top1_is_14(run):
    top = _of(run, "prefill.completed")[0]["payload"]["tensors"]["raw_logits"]["values"][0]
    return top[0] == 14, f"step-1 raw top-1: ID {top[0]} at {top[1]}"


def selections_14_to_18(run):
    return run.selected == [14, 15, 16, 17, 18], f"selected {run.selected}"


def cache_grows_by_one(run):
    growth = [[after - r.cache_at_start for after in r.cache_after] for r in run.steps if r.cache_after is not None]
    ok = all(g == [1] * len(g) for g in growth) and all(
        (r.cache_after is None) == (r.selected == run.config.sampling.eos_id) for r in run.steps[:-1]
    )
    return ok, f"per-step growth per layer {growth}"


def eos_not_returned(run):
    eos = run.config.sampling.eos_id
    streamed = [e["payload"]["token_id"] for e in _of(run, "stream.delta")]
    return eos not in streamed, f"streamed IDs {streamed}"


def delta_numbers(run):
    numbers = [e["payload"]["sequence_no"] for e in _of(run, "stream.delta")]
    terminal = _of(run, "response.completed")[0]["payload"]["sequence_no"]
    return numbers == [0, 1, 2, 3] and terminal == 4, f"delta numbers {numbers}, terminal {terminal}"


def finished_once(run):
    finished = [e["event_id"] for e in run.events if e["payload"].get("state") == "FINISHED"]
    released = [e["event_id"] for e in _of(run, "resources.released")]
    return len(finished) == 1 and len(released) == 1, f"FINISHED in {finished}, released in {released}"


ASSERTIONS = (
    ("1. the input IDs are the fixed 12", input_ids_fixed),
    ("2. both layers' prefill caches are 12 long", prefill_cache_12),
    ("3. the step-1 raw top-1 is ID 14", first_top1_is_14),
    ("4. the selections are exactly [14, 15, 16, 17, 18]", selections_14_to_18),
    ("5. each non-EOS token grows every layer's cache by 1", cache_grows_by_one),
    ("6. EOS is not in the returned text", eos_not_returned),
    ("7. deltas are numbered 0–3, the terminal is 4", delta_numbers),
    ("8. FINISHED once, resources released once", finished_once),
)


def check_reproduction(run) -> list[tuple[str, bool, str]]:
    """[(assertion, passed, detail)] for the eight assertions, in the source's order."""
    return [(name, *check(run)) for name, check in ASSERTIONS]
