"""Trace one: 天空为什么是蓝色？ from template to EOS on toy-decoder-v1 (source §7.2–7.5).

``run_text_trace`` (``runtime.py``) is the run; ``kind.py`` declares it as a trace kind.
"""
