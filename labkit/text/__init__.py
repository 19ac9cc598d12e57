"""Trace one: 天空为什么是蓝色？ from template to EOS on toy-decoder-v1 (source §7.2–7.5); the run is
``runtime.run_text_trace``, its kind ``kind.TEXT``."""
