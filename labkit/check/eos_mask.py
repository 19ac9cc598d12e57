"""Exercise of page 02 (§7.2): the minimum-length EOS mask.

The reader's mask replaces the library's processor of that name in ``run_text_trace``; the run
is compared event by event with the golden trace, then a request with a minimum of six tokens
with the library's run, then contexts the runtime does not reach, row by row.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from labkit.check.core import CandidateProblem, as_array, call
from labkit.check.grading import golden, trace


class _EosProcessor:
    """The reader's mask as a processor of the runtime: it must return a new float row."""

    def __init__(self, candidate):
        self.candidate = candidate

    def __call__(self, logits, context):
        before = np.array(logits, copy=True)
        got = call(self.candidate, logits, context)
        if not np.array_equal(np.asarray(logits), before, equal_nan=True):
            raise CandidateProblem(
                "your function changed the logits it was given; a processor returns "
                "a new row (start from logits.copy())"
            )
        return as_array(got, "the returned logits", shape=before.shape, dtype_kind="float")


def _run(config=None):
    def run(processor):
        from labkit.text.hooks import TextHooks
        from labkit.text.runtime import run_text_trace

        return run_text_trace(config, TextHooks(processors={"minimum_length_eos_mask": processor})).events

    return run


def _runs():
    from labkit.text.runtime import TextTraceConfig, run_text_trace

    longer = TextTraceConfig(sampling=replace(TextTraceConfig().sampling, minimum_output_tokens=6))
    return [
        ("the chapter's request (minimum 1) vs the golden trace", golden("text.jsonl"), _run()),
        ("the same request with minimum_output_tokens = 6", run_text_trace(longer).events, _run(longer)),
    ]


def _direct_cases():
    """Contexts the default request never produces: another EOS ID, a zero minimum."""
    from labkit.text.processors import ProcessorContext, SamplingConfig

    row = np.linspace(-2.0, 3.0, 20, dtype=np.float32)
    return [
        (
            "EOS is ID 7, minimum 2, one token selected",
            (row, ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14,))),
        ),
        (
            "EOS is ID 7, minimum 2, two tokens selected",
            (row, ProcessorContext(SamplingConfig(eos_id=7, minimum_output_tokens=2), (14, 15))),
        ),
        ("minimum 0, nothing selected yet", (row, ProcessorContext(SamplingConfig(minimum_output_tokens=0), ()))),
    ]


def _reference(logits, context):
    from labkit.text.processors import minimum_length_eos_mask

    return minimum_length_eos_mask(logits, context)


trace(
    "minimum_length_eos_mask",
    "notebooks/07-traces/02-text-request-to-first-token.md",
    "extend",
    "return a new row of logits [V] with EOS set to −∞ while fewer than context.config.minimum_output_tokens "
    "tokens have been selected (the page shows the processors' order, not this one's code)",
    ("logits", "context"),
    _runs,
    hook=_EosProcessor,
    cases=_direct_cases,
    reference=_reference,
    idea="a logits processor changes only the entries its rule names, and only while its condition holds",
    rule="the token being chosen now does not count as selected; a mask writes −∞, not a large negative "
    "number; EOS's ID and the minimum come from the context, and the row keeps its dtype",
)
