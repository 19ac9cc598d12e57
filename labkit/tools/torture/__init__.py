"""Trace three under real crashes and real concurrency (a Jepsen-style torture harness).

Child processes run the runtime's execute path against file-backed SQLite stores; the harness
kills them with SIGKILL, restarts them into recovery, races clients on one idempotency key, and
checks the promises on the files: ``workload`` (what a child runs), ``crashes``, ``races``,
``invariants`` (the fault schedules check the same) and ``report``, whose ``run_torture`` is
``labkit trace tool torture``.
"""
