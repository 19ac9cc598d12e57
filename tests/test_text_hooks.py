"""The runtime's two substitution hooks (``TextHooks``, used by the trace-one exercises): a
processor by name and the cached decode step.  With the library's own pieces plugged in, the run is
the golden run; bad hooks are refused with a message naming the argument."""

import numpy as np
import pytest

from labkit.core.events import read_jsonl
from labkit.core.fixtures import fixture_path
from labkit.text.config import TextHooks
from labkit.text.processors import PROCESSORS, ProcessorContext, SamplingConfig, apply_processors
from labkit.text.runtime import run_text_trace
from labkit.trace.divergence import first_divergence


@pytest.fixture(scope="module")
def golden():
    return read_jsonl(fixture_path("traces", "text.jsonl"))


def _library_decode(decoder, cache, token_id):
    return decoder.decode_step([token_id], cache).next_logits[0]


def test_every_library_processor_substituted_for_itself_reproduces_the_golden_trace(golden):
    calls = []

    def counted(name):
        def fn(logits, context):
            calls.append(name)
            return PROCESSORS[name](logits, context)

        return fn

    run = run_text_trace(hooks=TextHooks(processors={name: counted(name) for name in PROCESSORS}))
    divergence = first_divergence(golden, run.events)
    assert divergence is None, f"golden (A) vs substituted processors (B):\n{divergence}"
    assert len(calls) == len(PROCESSORS) * len(run.steps), f"{len(calls)} processor calls for {len(run.steps)} steps"


def test_a_substituted_processor_changes_the_run_where_it_should(golden):
    run = run_text_trace(hooks=TextHooks(processors={"minimum_length_eos_mask": lambda logits, context: logits.copy()}))
    divergence = first_divergence(golden, run.events)
    assert divergence is not None and divergence.event_ids == ("e05", "e05"), divergence
    assert divergence.field.startswith("masked_ids"), divergence.field


def test_apply_processors_refuses_unknown_names_and_non_functions():
    context = ProcessorContext(SamplingConfig())
    row = np.zeros(20, dtype=np.float32)
    with pytest.raises(ValueError, match="processors overrides a processor named 'eos_mask'"):
        apply_processors(row, context, {"eos_mask": lambda logits, context: logits})
    with pytest.raises(ValueError, match=r"processors\['grammar_mask'\] must be a function"):
        apply_processors(row, context, {"grammar_mask": 3})


def test_library_decode_through_the_hook_equals_the_golden_trace_without_its_ledger(golden):
    run = run_text_trace(hooks=TextHooks(decode_step=_library_decode))
    completed = [e for e in run.events if e["event_type"] == "decode.completed"]
    assert len(completed) == 4 and all("ledger" not in e["payload"] for e in completed)
    stripped = [
        {**e, "payload": {k: v for k, v in e["payload"].items() if k != "ledger"}}
        if e["event_type"] == "decode.completed"
        else e
        for e in golden
    ]
    divergence = first_divergence(stripped, run.events)
    assert divergence is None, f"golden without ledger (A) vs decode hook (B):\n{divergence}"
    assert run.cache_final_length == 16


def test_the_hook_records_the_logits_at_the_cache_length_it_fed():
    run = run_text_trace(hooks=TextHooks(decode_step=_library_decode))
    positions = [
        e["payload"]["tensors"]["raw_logits"]["position"] for e in run.events if e["event_type"] == "decode.completed"
    ]
    assert positions == [12, 13, 14, 15], positions


def test_a_decode_hook_returning_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match=r"decode_step must return one row of logits \[20\], got shape \[2, 20\]"):
        run_text_trace(hooks=TextHooks(decode_step=lambda decoder, cache, token_id: np.zeros((2, 20), np.float32)))
    with pytest.raises(ValueError, match="decode_step must be a function"):
        TextHooks(decode_step="decode")
    with pytest.raises(ValueError, match="processors must be a mapping"):
        TextHooks(processors=[("grammar_mask", lambda logits, context: logits)])
    with pytest.raises(ValueError, match="hooks must be a TextHooks, got dict"):
        run_text_trace(hooks={"decode_step": _library_decode})
