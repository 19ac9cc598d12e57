"""The configurations a torture run may use, by name, so another process can rebuild them.

Two of them are deliberately broken, to prove the harness can fail:

* service ``no_idempotency``: every request executes; the key's record is never consulted
  (a duplicated delivery, a resend after a lost answer or a racing client makes a second event);
* runtime ``journal_after_send``: the attempt is journaled only after the request went out
  (a kill in between leaves an event that no journal record authorised).
"""

from __future__ import annotations

from labkit.tools.calendar_service import CreateRequest, ServiceDesk


def always_perform(desk: ServiceDesk, key: str, request_digest: str, request: CreateRequest) -> dict:
    """The broken service: no lookup by key, every request is a first execution."""
    return desk.perform(request)


#: name → the calendar service's execute (None: the library's idempotent one)
SERVICES = {"idempotent": None, "no_idempotency": always_perform}
#: name → keyword arguments of ``labkit.tools.executor.Executor``
RUNTIMES = {"journal_first": {}, "journal_after_send": {"journal_before_send": False}}


def service_execute(name: str):
    if name not in SERVICES:
        raise ValueError(f"service must be one of {list(SERVICES)}, got {name!r}")
    return SERVICES[name]


def runtime_options(name: str) -> dict:
    if name not in RUNTIMES:
        raise ValueError(f"runtime must be one of {list(RUNTIMES)}, got {name!r}")
    return dict(RUNTIMES[name])
