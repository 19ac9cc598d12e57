"""Trace three: a confirmed, idempotent calendar tool call (source §7.10–7.15).

One file per idea, in the order a run meets them: ``toolspec`` (and the arguments' parse and
validation), ``tokenizer`` (and the template), ``model`` (toy-tool-decoder-v1), ``grammar`` (mc_01's mask),
``normalize``, ``confirm`` (authorisation and the digest), ``states`` (the Invocation's machine),
``calendar_service`` (the external system), ``store`` and ``journal`` (SQLite), ``seams`` (what can go
wrong, read where a run crosses a boundary), ``executor`` (attempts, idempotency keys, crash points),
``recovery`` (``execute_and_recover``, the one execute-and-recover path every driver takes), ``answer``
(mc_02's mask) and ``calls`` (masked greedy decoding, the two model calls); ``config`` (the config, the
run and its hooks), ``phases`` and ``runtime``, ``faults``, ``fixture``.  Two more drivers take the same
path: ``schedules`` (random fault schedules in process) and the crash/race harness beside the kit
(``harness/``: child processes under SIGKILLs and racing clients); both check the promises of
``torture/invariants.py``.
Submodules load on use.
"""
