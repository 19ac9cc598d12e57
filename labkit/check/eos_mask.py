"""Exercise of page 02 (§7.2): the minimum-length EOS mask.

The reader's mask replaces the library's processor of that name in ``run_text_trace``; the run
is compared event by event with the golden trace, then a request with a minimum of six tokens
with the library's run, then contexts the runtime does not reach, row by row.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from labkit.check._support import compare_traces, golden
from labkit.check.core import CandidateProblem, CheckResult, as_array, call, compare_arrays, exercise, passed

PAGE = "notebooks/07-traces/02-text-request-to-first-token.md"


_EOS_HINT_CONTRACT = (
    "a processor returns a new row: EOS's entry becomes −∞ (-np.inf, not a large "
    "negative number) or stays as it was; every other entry passes through unchanged"
)


def _tokens(n) -> str:
    if n == 0:
        return "no token had"
    return f"{n} token{'s' if n != 1 else ''} had"


def _eos_hint(div, outputs: list | None = None) -> str:
    """``outputs``: the reader's returned rows of this run, one per selection step."""
    event = div.event_b or div.event_a or {}
    payload = event.get("payload", {})
    config_note = (
        "Read EOS's ID and the minimum from context.config (eos_id, minimum_output_tokens) "
        "and the count from context.selected_so_far"
    )
    if div.field.endswith("dtype"):
        return "keep the dtype of the logits you were given (float32 here); " + _EOS_HINT_CONTRACT
    step = event.get("logical_step")
    already = step - 1 if isinstance(step, int) else None
    if div.field.startswith("masked_ids") and isinstance(div.value_a, list) and isinstance(div.value_b, list):
        extra = sorted(set(div.value_b) - set(div.value_a))
        missing = sorted(set(div.value_a) - set(div.value_b))
        step_output = outputs[step - 1] if outputs and isinstance(step, int) and step <= len(outputs) else None
        if (
            missing
            and step_output is not None
            and all(np.isfinite(step_output[i]) for i in missing)
            and all(step_output[i] < -1e4 for i in missing)
        ):
            return (
                f"at step {step} your mask wrote the very negative number {float(step_output[missing[0]]):g} "
                "for EOS. A mask writes −∞ (-np.inf): only then is the token impossible, "
                "whatever the other logits are, and counted in masked_ids"
            )
        if missing:
            return (
                f"at step {step} {_tokens(already)} been selected, fewer than the minimum, so EOS "
                "must be −∞ (masked_ids lists the non-finite entries); the token being chosen right "
                "now does not count yet. " + config_note
            )
        if extra:
            return (
                f"at step {step} {_tokens(already)} already been selected: once the minimum is "
                "reached EOS must be left alone, and no other token is this mask's business. " + config_note
            )
    if event.get("event_type") == "token.selected" and "token_id" in payload:
        return (
            "the selection changed because EOS was masked or left open at the wrong step: "
            "EOS is forbidden exactly while len(selected so far) < minimum_output_tokens. " + config_note
        )
    return _EOS_HINT_CONTRACT


class _EosProcessor:
    """The reader's mask as a processor of the runtime; ``outputs`` keeps what it returned."""

    def __init__(self, candidate):
        self.candidate = candidate
        self.outputs: list[np.ndarray] = []

    def __call__(self, logits, context):
        before = np.array(logits, copy=True)
        got = call(self.candidate, logits, context)
        if not np.array_equal(np.asarray(logits), before, equal_nan=True):
            raise CandidateProblem(
                "your function changed the logits it was given; a processor returns "
                "a new row (start from logits.copy())"
            )
        row = as_array(got, "the returned logits", shape=before.shape, dtype_kind="float")
        self.outputs.append(row)
        return row

    def run(self, config=None):
        from labkit.text.runtime import run_text_trace

        self.outputs = []
        from labkit.text.hooks import TextHooks

        return run_text_trace(config, TextHooks(processors={"minimum_length_eos_mask": self}))

    def hint(self, div) -> str:
        return _eos_hint(div, self.outputs)


def _eos_direct_cases():
    """Contexts the default request never produces: another EOS ID, a zero minimum."""
    from labkit.text.processors import ProcessorContext, SamplingConfig

    row = np.linspace(-2.0, 3.0, 20, dtype=np.float32)
    return [
        (
            "EOS is ID 7, minimum 2, one token selected",
            row,
            ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14,)),
        ),
        (
            "EOS is ID 7, minimum 2, two tokens selected",
            row,
            ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14, 15)),
        ),
        ("minimum 0, nothing selected yet", row, ProcessorContext(SamplingConfig(minimum_output_tokens=0), ())),
    ]


@exercise(
    "minimum_length_eos_mask",
    page=PAGE,
    signature=("logits", "context"),
    kind="extend",
    idea="a logits processor changes only the entries its rule names, and only while its condition holds",
)
def check_minimum_length_eos_mask(candidate) -> CheckResult:
    """return a new row of logits [V] with EOS set to −∞ while fewer than
    context.config.minimum_output_tokens tokens have been selected"""
    from labkit.text.processors import minimum_length_eos_mask
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    reader = _EosProcessor(candidate)
    # 1. the chapter's request, inside the real runtime, against the golden trace
    mine = reader.run()
    failed = compare_traces(
        "the chapter's request (minimum 1) vs the golden trace", golden("text.jsonl"), mine.events, reader.hint
    )
    if failed is not None:
        return failed
    # 2. a request that must not end before six tokens, against the library's run
    longer = TextTraceConfig(sampling=replace(TextTraceConfig().sampling, minimum_output_tokens=6))
    reference = run_text_trace(longer)
    mine = reader.run(longer)
    failed = compare_traces(
        "the same request with minimum_output_tokens = 6", reference.events, mine.events, reader.hint
    )
    if failed is not None:
        return failed
    # 3. contexts the runtime does not reach here, row by row
    for case, row, context in _eos_direct_cases():
        result = compare_arrays(
            reader(row.copy(), context),
            minimum_length_eos_mask(row, context),
            atol=0.0,
            where=f"{case}: logits",
            rule="masked entries and the rest unchanged",
            hint="read EOS's ID and the minimum from context.config "
            "(eos_id, minimum_output_tokens), never assume 18 and 1",
        )
        if not result.passed:
            return result
    opened = next((s.step for s in mine.steps if longer.sampling.eos_id not in s.masked_ids), None)
    held = f"holds EOS back until step {opened}" if opened else "holds EOS back to the end"
    return passed(
        f"the golden trace is reproduced, a minimum of 6 {held}, "
        f"and {len(_eos_direct_cases())} other contexts are masked right"
    )
