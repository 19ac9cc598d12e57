"""No graded exercise passes, with the teacher's key loaded, by handing in what the kit or the page gives:

* every callable the page imports or shows and every public ``labkit`` callable that takes the
  exercise's arguments, as it is and with its output adapted (each item of a tuple or list it returns,
  each public attribute of an object it returns), and the page's callables composed in pairs;
* every number the page's stored outputs print, against the page's graded values.

A lazy student has the page and the kit; none of this may pass a graded exercise (issue 40).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import labkit
import labkit.check as check

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = check.exercises()
#: what a page or the kit holds that is not an answer to try: the commands, the book's tools, the checks
NOT_TRIED = ("labkit.cli", "booktools", "labkit.check", "labkit.__main__", "labkit.tools.invariants")
#: at most this many adapted forms of one candidate's output
MOST_ADAPTED = 12

pytestmark = pytest.mark.slow


def _code_cells(page: Path) -> list[str]:
    return re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)


def page_callables(page: Path) -> dict[str, object]:
    """Every labkit callable the page imports (and the public members of what it imports)."""
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
                    names[alias.asname or alias.name] = found or importlib.import_module(f"{node.module}.{alias.name}")
    found: dict[str, object] = {}
    for name, obj in names.items():
        if callable(obj) and not isinstance(obj, check.Exercise):
            found[name] = obj
        for attr in dir(obj) if inspect.isclass(obj) or inspect.ismodule(obj) else ():
            member = getattr(obj, attr, None)
            if not attr.startswith("_") and callable(member) and _in_kit(member):
                found[f"{name}.{attr}"] = member
    return found


def _in_kit(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("labkit") and not module.startswith(NOT_TRIED)


@cache
def kit_callables() -> dict[str, object]:
    """Every public function and class of ``labkit`` (its commands, tools and checks left out)."""
    found = {}
    for info in pkgutil.walk_packages(labkit.__path__, "labkit."):
        if info.name.startswith(NOT_TRIED):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not name.startswith("_") and callable(obj) and _in_kit(obj) and not isinstance(obj, check.Exercise):
                found[f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"] = obj
    return found


def _takes(candidate, arity: int) -> bool:
    try:
        inspect.signature(candidate).bind(*range(arity))
    except TypeError:
        return False
    except ValueError:  # no signature to read: let the check try it
        return True
    return True


class Recorder:
    """A candidate that remembers what its first call returned, so its output can be adapted."""

    def __init__(self, candidate, arity: int):
        self.candidate, self.returned = candidate, None
        self.__signature__ = inspect.Signature([inspect.Parameter(f"a{i}", 1) for i in range(arity)])

    def __call__(self, *args):
        out = self.candidate(*args)
        if self.returned is None:
            self.returned = out
        return out


def _adapters(returned) -> list[tuple[str, object]]:
    """The ways a lazy student could pick the answer out of what a kit callable returned."""
    if isinstance(returned, tuple | list):
        return [(f"[{i}]", lambda out, i=i: out[i]) for i in range(min(len(returned), MOST_ADAPTED))]
    if isinstance(returned, np.ndarray | np.generic | int | float | str | bool | dict) or returned is None:
        return []
    names = []
    for name in dir(returned):
        try:
            plain = not name.startswith("_") and not callable(getattr(returned, name))
        except Exception:  # a property that cannot be read on this object
            plain = False
        names += [name] if plain else []
    return [(f".{n}", lambda out, n=n: getattr(out, n)) for n in names[:MOST_ADAPTED]]


def _passes(spec, candidate) -> bool:
    try:
        return bool(spec(candidate).passed)
    except Exception:  # a candidate the grading cannot even hold is not a pass
        return False


def _tried(spec, label: str, candidate, ran: dict) -> list[str]:
    """The forms of ``candidate`` that pass ``spec``: as it is, then its output adapted. A candidate
    that ran on the checker's arguments is kept in ``ran`` (label → candidate) for compositions."""
    arity = len(spec.signature)
    recorder = Recorder(candidate, arity)
    if _passes(spec, recorder):
        return [label]
    if recorder.returned is None:
        return []
    ran[label] = candidate
    passing = []
    for name, pick in _adapters(recorder.returned):

        def adapted(*args, pick=pick):
            return pick(candidate(*args))

        adapted.__signature__ = recorder.__signature__
        if _passes(spec, adapted):
            passing.append(f"{label}(…){name}")
    return passing


FUNCTIONS = sorted(n for n, s in EXERCISES.items() if s.graded and not s.is_value)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_no_kit_or_page_callable_passes_a_graded_function_exercise(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a candidate may write files named after what it is handed
    spec = EXERCISES[name]
    arity = len(spec.signature)
    on_page = page_callables(ROOT / spec.page)
    candidates = {**{k: v for k, v in kit_callables().items() if _takes(v, arity)}, **on_page}
    ran: dict[str, object] = {}
    passing = [found for label, c in candidates.items() if _takes(c, arity) for found in _tried(spec, label, c, ran)]
    outers = {k: v for k, v in on_page.items() if _takes(v, 1) and not inspect.isclass(v)}
    inners = {k: v for k, v in ran.items() if k in on_page}
    for (outer_label, outer), (inner_label, inner) in ((o, i) for o in outers.items() for i in inners.items()):

        def composed(*args, outer=outer, inner=inner):
            return outer(inner(*args))

        composed.__signature__ = inspect.Signature([inspect.Parameter(f"a{i}", 1) for i in range(arity)])
        if _passes(spec, composed):
            passing.append(f"{outer_label}({inner_label}(…))")
    assert not passing, f"{name} passes with what the kit or its page gives: {passing}"


def printed_numbers(page: Path) -> set[float]:
    """Every number the page's stored outputs print (text and stdout, not images)."""
    notebook = json.loads(page.with_suffix(".ipynb").read_text(encoding="utf-8"))
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            texts.append("".join(output.get("data", {}).get("text/plain", "")))
    pattern = r"[-−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    return {float(n.replace("−", "-")) for text in texts for n in re.findall(pattern, text)}


VALUES = sorted(n for n, s in EXERCISES.items() if s.graded and s.is_value)


@pytest.mark.parametrize("name", VALUES)
def test_no_number_the_page_prints_passes_a_graded_value(name):
    spec = EXERCISES[name]
    answer = spec.answer()
    shape = len(answer) if isinstance(answer, list | tuple) else None
    numbers = sorted(printed_numbers(ROOT / spec.page))
    tries = numbers if shape is None else [[n] * shape for n in numbers]
    passing = [n for n in tries if _passes(spec, n)]
    assert not passing, f"{name} passes with a number its page prints: {passing[:5]}"
