"""The promises of trace three's execute path, checked by the fault schedules and by ``harness/``."""
