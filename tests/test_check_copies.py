"""No graded exercise is passable by handing in what the page gives: every ``show_source`` target
and every ``labkit`` callable a page imports is tried against every function exercise of that
page, and none passes (issue 26 item 4: a class copy holds no answer)."""

import ast
import importlib
import re
from pathlib import Path

import pytest

import labkit.check as check

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = check.exercises()


def _code_cells(page: Path) -> list[str]:
    return re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)


def page_callables(page: Path) -> dict[str, object]:
    """Every labkit callable the page imports, and every show_source target reachable from them."""
    names: dict[str, object] = {}
    for cell in _code_cells(page):
        try:
            tree = ast.parse("\n".join(line for line in cell.splitlines() if not line.startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    found = getattr(module, alias.name, None)
                    if found is None:
                        found = importlib.import_module(f"{node.module}.{alias.name}")
                    names[alias.asname or alias.name] = found
    found: dict[str, object] = {}
    for name, obj in names.items():
        if callable(obj):
            found[name] = obj
        for attr in dir(obj) if isinstance(obj, type) or type(obj).__name__ == "module" else ():
            member = getattr(obj, attr, None)
            if (
                not attr.startswith("_")
                and callable(member)
                and (getattr(member, "__module__", None) or "").startswith("labkit")
            ):
                found[f"{name}.{attr}"] = member
    return found


PAGES = sorted({spec.page for spec in EXERCISES.values() if not spec.is_value})


@pytest.mark.parametrize("page", PAGES)
def test_no_function_the_page_shows_or_imports_passes_its_checkers(page, tmp_path, monkeypatch):
    # a candidate may write files named after the arguments it is handed (a store opened on an
    # array): keep them out of the clone
    monkeypatch.chdir(tmp_path)
    candidates = page_callables(ROOT / page)
    passing = []
    for spec in (s for s in EXERCISES.values() if s.page == page and not s.is_value):
        for label, candidate in candidates.items():
            try:
                result = spec(candidate)
            except Exception:  # a candidate the grading cannot even hold is not a pass
                continue
            if result.passed:
                passing.append(f"{spec.name} ← {label}")
    assert not passing, f"answers importable on {page}: {passing}"
