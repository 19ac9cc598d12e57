"""Shared test settings: a non-interactive matplotlib backend and the repository root."""

import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
