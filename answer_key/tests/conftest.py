"""The key's tests: every solution passes with the key loaded; near misses fail; the key's hidden cases."""

import importlib.util
from pathlib import Path

import pytest

import answer_key  # noqa: F401  (attaches the key to the kit's exercises)

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"


@pytest.fixture
def solution():
    """``solution("labs_i")`` → the module answer_key/solutions/labs_i.py."""

    def load(stem: str):
        spec = importlib.util.spec_from_file_location(f"solutions_{stem}_for_test", SOLUTIONS / f"{stem}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
