"""What the harness's fork server loads once before it forks a child (``report.context``): the ToolSpec
and §7.12's Invocation (``fixture_invocation`` caches them) and the canonical-JSON package, so no
racing client or crash incarnation pays half a second for them on its first request."""

import rfc8785  # noqa: F401 — imported by labkit.tools.confirm on first use

from labkit.tools.fixture import fixture_invocation

fixture_invocation()
