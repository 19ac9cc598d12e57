"""PNG bytes of a matplotlib figure, with no software/version metadata (stable across runs)."""

from __future__ import annotations

import io


def figure_png(figure) -> bytes:
    """PNG bytes of ``figure`` as a page stores it."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
