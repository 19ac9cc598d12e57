"""The promises of trace three's execute path (``invariants``), checked on the stores: by the in-process
fault schedules (``labkit.tools.schedules``) and by the crash/race harness beside the kit (``harness/``,
``python -m harness``)."""
