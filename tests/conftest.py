"""Shared test settings: a non-interactive matplotlib backend and the repository root."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]

# The answer key: a class copy leaves answer_key/ out. Tests that need the key live in
# answer_key/tests/; the few here that read a worked solution skip with this message.
ANSWER_KEY = REPO / "answer_key" / "solutions"
ANSWER_KEY_MISSING = (
    "answer_key/ (the answer key) is not in this copy of the book — a class "
    "copy: the tests that run the worked solutions are skipped"
)


def _load_solution(stem: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"solutions_{stem}_for_test", ANSWER_KEY / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def answer_key():
    """``answer_key("labs_i")`` → the module answer_key/solutions/labs_i.py; skips when it is absent."""
    if not ANSWER_KEY.is_dir():
        pytest.skip(ANSWER_KEY_MISSING)
    return _load_solution
