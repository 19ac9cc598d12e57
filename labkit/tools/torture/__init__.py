"""Trace three under real crashes and real concurrency (a Jepsen-style torture harness).

The runtime's execute path runs in child processes against file-backed SQLite stores (the journal
and the calendar's store); the harness kills them with SIGKILL, restarts them, lets them recover
from the journal, races several clients on one idempotency key, and checks the promises on the
files afterwards.  ``workload`` is what a run executes and one incarnation of the runtime (a
child process); ``invariants`` what the files hold and the promises checked on it (the fault
schedules check the same); ``crashes`` kill, restart, recover, repeat; ``races`` clients executing
one approved invocation at once; ``report`` one run of both, and one recovery to follow.

Entry point: ``labkit.tools.torture.report.run_torture`` (``labkit trace tool torture``).
"""
