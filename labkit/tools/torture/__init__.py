"""Trace three under real crashes and real concurrency (a Jepsen-style torture harness).

The runtime's execute path runs in child processes against file-backed SQLite stores (the
journal and the calendar's store); the harness kills them with SIGKILL, restarts them, lets
them recover from the journal, races several clients on one idempotency key, and checks the
promises on the files afterwards.  One file per idea:

* ``workload``   — the invocations a run executes, how they are approved in a journal, and the
  correct and the deliberately broken configurations, by name;
* ``child``      — one incarnation of the runtime (a child process) and its kill switch;
* ``snapshot``   — what the files hold, read by the harness, never by the runtime;
* ``invariants`` — the promises, checked on snapshots (the fault schedules check the same);
* ``crashes``    — kill, restart, recover, repeat: the crash schedules;
* ``races``      — clients executing the same approved invocation at the same time;
* ``report``     — one run of both, its counts and the invariants' results.

Entry point: ``labkit.tools.torture.report.run_torture`` (``labkit trace tool torture`` on
the command line, ``labkit.cli.torture``).
"""
