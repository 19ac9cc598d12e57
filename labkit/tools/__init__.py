"""Trace three: a confirmed, idempotent calendar tool call (source §7.10–7.15), one file per idea in the order
a run meets them: ``toolspec``, ``tokenizer``, ``model``, ``grammar``, ``normalize``, ``confirm``, ``states``,
``calendar_service``, ``store`` and ``journal``, ``seams``, ``executor``, ``recovery``, ``answer``, ``calls``;
``config``, ``phases`` and ``runtime`` run them; ``schedules`` (and ``harness/``, beside the kit) drive the
execute path under faults, checking the promises of ``invariants``.
"""
