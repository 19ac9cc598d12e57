"""Trace three under real crashes and real concurrency (a Jepsen-style torture harness), beside labkit.

Child processes run the runtime's execute path against file-backed SQLite stores; the harness
kills them with SIGKILL, restarts them into recovery, races clients on one idempotency key, and
checks the promises on the files: ``workload`` (what a child runs), ``crashes``, ``races``,
``report``, whose ``run_torture`` is ``python -m harness``, and ``torn`` (every torn commit).
The promises themselves are the kit's, ``labkit.tools.invariants``: the in-process fault
schedules check the same ones.  It imports labkit; labkit never imports it.  It runs from the
book's clone (a page loads it with ``labkit.core.fixtures.import_from_book("harness")``).
"""
