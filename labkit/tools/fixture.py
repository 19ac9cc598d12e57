"""What the runtime and the checks read of trace three's fixture run: §7.11's arguments, §7.12's Invocation and
the golden traces' file names.  The recipe that writes ``fixtures/tools/`` and those traces is the book's
(``booktools/recipes/tools.py``).
"""

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labkit.tools.normalize import Invocation

#: §7.11: what the first call's arguments bytes must parse to
TARGET_ARGUMENTS = {
    "calendar_id": "primary",
    "title": "带护照",
    "local_date": "2026-07-20",
    "local_time": "09:00",
    "duration_minutes": 10,
}


@cache
def fixture_invocation() -> "Invocation":
    """The §7.12 Invocation inv_01: §7.11's arguments normalised under the happy run's config."""
    from labkit.tools.config import ToolRunConfig
    from labkit.tools.toolspec import load_toolspec

    return ToolRunConfig().invocation(load_toolspec(), TARGET_ARGUMENTS)


def golden_file(scenario: str) -> str:
    """The golden trace of ``scenario`` under ``fixtures/traces/``."""
    return "tool.jsonl" if scenario == "happy" else f"tool-{scenario}.jsonl"
