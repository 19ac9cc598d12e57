"""Trace three: a confirmed, idempotent calendar tool call (source §7.10–7.15).

One file per idea: ``toolspec`` (the offered tool), ``tokenizer`` and ``template`` (what
the model reads), ``model`` (toy-tool-decoder-v1 on the book's one transformer),
``grammar`` (the JSON mask derived from the schema), ``decode`` (grammar-masked greedy
decoding), ``states`` (the Invocation state machine), ``validate``, ``normalize``,
``authorize``, ``confirm`` (the invocation digest), ``calendar_service`` (the external
system), ``store`` (opening a SQLite store file, or refusing a bad one), ``journal``
(SQLite, written before each side effect), ``executor`` (attempts, idempotency keys, crash
points), ``recovery`` (restart from the journal, and ``execute_and_recover``: the one
execute-and-recover path every driver takes), ``answer`` (mc_02's answer slots), ``calls``
(the two model calls), ``phases`` and ``commit_phases`` (one function per group of events t00–t14), ``runtime``
(the config and the runner), ``faults`` (the named faults), ``schedules`` (random fault schedules run
through the same phases, checked with ``torture.invariants``), ``hooks`` (the pieces a
reader's function may replace in a run), ``fixture``; ``torture/`` runs the execute path in
child processes under SIGKILLs and racing clients and checks the promises on the files.
Importing this package is cheap: submodules load on use.
"""
