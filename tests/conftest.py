"""Shared test settings: a non-interactive matplotlib backend and the repository root."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]

# The answer key: a class copy (`make class-copy`) leaves solutions/ out, and the tests that
# need it skip with this message instead of failing.
ANSWER_KEY = REPO / "solutions"
ANSWER_KEY_MISSING = (
    "solutions/ (the answer key) is not in this copy of the book — a class "
    "copy: the tests that run the reference solutions are skipped"
)


def _load_solution(stem: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"solutions_{stem}_for_test", ANSWER_KEY / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def answer_key():
    """``answer_key("labs_i")`` → the module solutions/labs_i.py; skips when solutions/ is absent."""
    if not ANSWER_KEY.is_dir():
        pytest.skip(ANSWER_KEY_MISSING)
    return _load_solution
