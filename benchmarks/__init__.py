"""Benchmarks of *Inside One Generation*: how long the book takes to re-execute, how the labs
compare with a plain script, how quickly the players answer, and how decoding scales.

Run ``python benchmarks/run.py`` (or ``make bench``); see ``benchmarks/README.md``.
Nothing here is imported by ``labkit``; timing never appears in the test suite.
"""
