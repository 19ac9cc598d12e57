"""Trace one: 天空为什么是蓝色？ from template to EOS on toy-decoder-v1 (source §7.2–7.5).

tokenizer.py  toy-tokenizer-v1 (special tags, longest match, IDs → UTF-8 bytes)
template.py   chat-template-v1
model.py      toy-decoder-v1: configuration, stored weights, the fitting recipe
processors.py the six logits processors and greedy selection
runtime.py    ``run_text_trace(TextTraceConfig, TextHooks)`` → events e00–e24 and the step ledger,
              one function per group of events
hooks.py      ``TextHooks``: the processor or decode step a reader's function may replace
faults.py     the named faults (each a change of ``TextTraceConfig``)
assertions.py the eight reproduction assertions of §7.5, as checks on a run
fixture.py    the recipe for fixtures/text/ and fixtures/traces/text.jsonl
kind.py       trace one as a ``TraceKind`` (registered in ``labkit.trace.kinds``)
"""
