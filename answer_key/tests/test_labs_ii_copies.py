"""The adversarial self-test of labs 07–13: with the key loaded, try to pass every graded exercise with what
the page gives — every callable it imports or shows, the public callables near the mechanism, their outputs
adapted (an item, an attribute, a key, a float) and composed in pairs, and every number the page's stored
outputs print. None may pass."""

from __future__ import annotations

import ast
import importlib
import json
import re
import signal
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    "07-grpo-and-ppo-clip",
    "08-kl-divergence",
    "09-speculative-sampling",
    "10-bandwidth-budget",
    "11-unequal-rank-gradients",
    "12-the-two-reports",
    "13-measuring-the-book",
)
#: the public modules near each page's mechanism, beside what the page imports (the first: the lab's own,
#: whose callables are also composed in pairs)
NEAR = {
    "07-grpo-and-ppo-clip": ("labkit.labs.grpo",),
    "08-kl-divergence": ("labkit.labs.kl", "labkit.nn.attention", "labkit.labs.common"),
    "09-speculative-sampling": ("labkit.labs.speculative",),
    "10-bandwidth-budget": ("labkit.labs.bandwidth",),
    "11-unequal-rank-gradients": ("labkit.labs.unequal_rank",),
    "12-the-two-reports": ("labkit.labs.report", "labkit.labs.common"),
    "13-measuring-the-book": ("benchmarks.fit", "benchmarks.figures"),
}
#: callables that draw, open players or write files: not answers, and slow to try
SKIP = re.compile(r"player|plt|show_source|figure|scaling_figure|import_from_book|save|write|lab$|main")


def _code(page: str) -> ast.Module:
    """Every code cell of the page, parsed (cell options and magics left out)."""
    text = (ROOT / "notebooks" / "11-labs" / f"{page}.md").read_text(encoding="utf-8")
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    lines = [line for cell in cells for line in cell.splitlines() if not line.startswith((":", "%", "!"))]
    return ast.parse("\n".join(lines))


def _modules(page: str) -> list[object]:
    """Every module the page imports from (labkit, benchmarks), and the modules near its mechanism."""
    found = [importlib.import_module(name) for name in NEAR[page]]
    for node in ast.walk(_code(page)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("labkit", "benchmarks"):
            module = importlib.import_module(node.module)
            found.append(module)
            for alias in node.names:
                member = getattr(module, alias.name, None)
                if type(member).__name__ == "module":
                    found.append(member)
    return found


def page_callables(page: str) -> dict[str, object]:
    """name → callable: every public callable of every module the page imports or is near."""
    found = {}
    for module in _modules(page):
        for name in dir(module):
            member = getattr(module, name)
            home = getattr(member, "__module__", "") or ""
            if name.startswith("_") or not callable(member) or SKIP.search(name):
                continue
            if home.split(".")[0] in ("labkit", "benchmarks"):
                found[f"{module.__name__}.{name}"] = member
    return found


def printed_numbers(page: str) -> list[float]:
    """Every number the page's stored outputs print."""
    notebook = json.loads((ROOT / "notebooks" / "11-labs" / f"{page}.ipynb").read_text(encoding="utf-8"))
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", "")))
    found = {float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", "\n".join(texts))}
    return sorted(found)


def _adapters():
    """Ways to read an answer out of a callable's output."""
    yield "as is", lambda out: out
    yield "[0]", lambda out: out[0]
    yield "[1]", lambda out: out[1]
    yield "[-1]", lambda out: out[-1]
    yield "float", lambda out: float(np.asarray(out, dtype=float).reshape(-1)[0])
    for field in ("residual", "accept_probability", "reject_probability", "output", "accepted"):
        yield f".{field}", lambda out, f=field: getattr(out, f)
    for key in ("lower_bound_ms", "exponent", "naive_average", "global_token_average", "compensated_local_gradients"):
        yield f"[{key!r}]", lambda out, k=key: out[k]


ADAPTERS = dict(_adapters())


class TooSlow(Exception):
    """A candidate that ran past its time: not a pass."""


@contextmanager
def deadline(seconds: float):
    def stop(*_):
        raise TooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def passes(spec, candidate) -> bool:
    try:
        with deadline(3.0):
            return bool(spec(candidate).passed)
    except Exception:  # a candidate the grading cannot even hold (or one too slow) is not a pass
        return False


def _graded(page: str):
    return [s for s in check.exercises().values() if s.page.endswith(f"{page}.md") and s.graded]


def _singles(callables):
    for label, f in callables.items():
        for how, adapt in ADAPTERS.items():
            yield f"{how} of {label}", lambda *a, f=f, adapt=adapt: adapt(f(*a))


#: what a composition adapts: the inner output, then the outer one
INNER = ("as is", "[0]", "[1]", "float", ".residual", ".accept_probability", "['lower_bound_ms']")
OUTER = ("as is", "[0]", "[1]", "float")


def _pairs(callables):
    """outer(adapted inner(args)) for every pair of the mechanism's own callables, adapted again."""
    for inner_label, inner in callables.items():
        for outer_label, outer in callables.items():
            for how, adapt in ((how, ADAPTERS[how]) for how in INNER):
                for how_out in OUTER:
                    last = ADAPTERS[how_out]
                    label = f"{how_out} of {outer_label}({how} of {inner_label})"
                    yield label, lambda *a, i=inner, o=outer, ad=adapt, la=last: la(o(ad(i(*a))))


@pytest.mark.parametrize("page", PAGES)
def test_nothing_the_page_gives_passes_its_graded_exercises(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a candidate that writes a file keeps it out of the clone
    import answer_key  # noqa: F401  (the key attached: the candidates meet the hidden cases too)

    callables = page_callables(page)
    near = {k: v for k, v in callables.items() if k.startswith(NEAR[page][0])}
    numbers = printed_numbers(page)
    passing = []
    for spec in _graded(page):
        candidates = list(_singles(callables)) + list(_pairs(near))
        candidates += [(f"the printed number {x}", lambda *a, x=x: x) for x in numbers]
        if spec.is_value:
            candidates = [(f"the printed number {x}", x) for x in numbers]
        passing += [f"{spec.name} ← {label}" for label, candidate in candidates if passes(spec, candidate)]
    assert callables and numbers
    assert not passing, f"answers to be had from page {page}: {passing[:20]}"


def test_the_search_finds_the_answer_of_the_old_least_squares_exercise():
    """The search is not blind: graded as it was (a least-squares k on the same curves), growth_exponent
    is passed by an item of a callable page 13 imports — benchmarks.fit.power_fit's exponent."""
    import answer_key  # noqa: F401

    spec = check.exercises()["growth_exponent"]
    least_squares = lambda contexts, times: float(np.polyfit(np.log(contexts), np.log(times), 1)[0])  # noqa: E731
    old = replace(spec, properties=None, hook=None, reference=least_squares, cases=spec.cases, wrong_runs=0)
    found = [label for label, candidate in _singles(page_callables("13-measuring-the-book")) if passes(old, candidate)]
    assert any("power_fit" in label for label in found), found
