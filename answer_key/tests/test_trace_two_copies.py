"""A lazy student's try at trace two's graded exercises, with the key loaded: every callable pages 04–06
import or show and every public callable of the diffusion kit (and of the public check itself), called
on the exercise's arguments as they are or adapted (a table lookup, a product of the shape, an item, an
attribute), composed in pairs, and every number the pages' stored outputs print. None may pass."""

import ast
import importlib
import inspect
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import answer_key  # noqa: F401  (attaches the key)
import labkit.check as check
from labkit.check.core import without_key

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "shared_latent_numbers": "notebooks/07-traces/04-diffusion-conditions-and-noise",
    "recover_guidance_scale": "notebooks/07-traces/05-diffusion-denoising-and-decoding",
    "ddim_v_update": "notebooks/07-traces/06-diffusion-ddim-by-hand",
}
NEAR = ("ddim", "guidance", "normal", "philox", "pipeline", "config", "denoiser", "faults")


def _imported(page: str) -> dict[str, object]:
    """The labkit names the page's code cells import, and what ``show_source`` shows."""
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    names: dict[str, object] = {}
    for cell in cells:
        tree = ast.parse("\n".join(line for line in cell.splitlines() if not line.startswith(("%", "!", ":"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    found = getattr(module, alias.name, None)
                    names[alias.asname or alias.name] = found or importlib.import_module(f"{node.module}.{alias.name}")
    return names


def _members(names: dict[str, object]) -> dict[str, object]:
    """Every callable among ``names`` and the public labkit callables of the modules and classes there."""
    found = {}
    for name, obj in names.items():
        if callable(obj):
            found[name] = obj
        if inspect.ismodule(obj) or isinstance(obj, type):
            for attr in dir(obj):
                member = getattr(obj, attr, None)
                if (
                    not attr.startswith("__")
                    and callable(member)
                    and (getattr(member, "__module__", None) or "").startswith("labkit")
                ):
                    found[f"{name}.{attr}"] = member
    return found


def pool(page: str) -> dict[str, object]:
    near = {f"labkit.diffusion.{m}": importlib.import_module(f"labkit.diffusion.{m}") for m in NEAR}
    near["labkit.check.trace_two"] = importlib.import_module("labkit.check.trace_two")
    found = _members({**_imported(page), **near})
    return {k: v for k, v in found.items() if not k.endswith(("write_png", "build"))}  # no files written


def printed_numbers(page: str) -> list[float]:
    """Every number in the page's stored outputs."""
    notebook = json.loads((ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))
    text = " ".join(
        "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
    )
    return sorted({float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)})


def _lookup(args):
    """ddim_v_update's (z_t, v, t, prev_t, table) as a kernel takes them: (z_t, v, ᾱ_t, ᾱ_prev)."""
    z, v, t, prev, table = args
    return z, v, table[t], 1.0 if prev is None else table[prev]


#: how each exercise's arguments may be handed to a kit callable
SHAPES = {
    "shared_latent_numbers": (
        lambda a: a,
        lambda a: (math.prod(a[0]),),
        lambda a: (math.prod(a[0]) // 4,),
        lambda a: (a[0],),
        lambda a: (a[1], a[2]),
        lambda a: (math.prod(a[0]), a[1], a[2]),
        lambda a: (314159, a[1]),
    ),
    "recover_guidance_scale": (lambda a: a, lambda a: (a[0],), lambda a: (a[1],), lambda a: (a[0], 5.0)),
    "ddim_v_update": (lambda a: a, _lookup, lambda a: _lookup(a)[:2], lambda a: (a[0], a[1], a[2])),
}
#: how a kit callable's result may be handed in
RESULTS = (
    lambda r: r,
    lambda r: r[0],
    lambda r: r[1],
    lambda r: r[-1],
    lambda r: r.values,
    lambda r: r.counter_after,
    lambda r: r.size,
    lambda r: (r, r - 1),
    lambda r: 4 * r,
    lambda r: r[::-1],
)


def _candidates(name: str, callables: dict[str, object]):
    for (label, kit), (i, shape), (j, result) in itertools.product(
        callables.items(), enumerate(SHAPES[name]), enumerate(RESULTS)
    ):
        yield f"{label} (arguments {i}, result {j})", lambda *a, kit=kit, s=shape, r=result: r(kit(*s(a)))


def _passes(spec, candidate) -> bool:
    try:
        return spec(candidate).passed
    except Exception:  # what the grading cannot even hold is not a pass
        return False


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_kit_callable_the_page_imports_or_shows_passes_adapted(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = check.exercises()[name]
    passing = [label for label, c in _candidates(name, pool(PAGES[name])) if _passes(spec, c)]
    assert not passing, f"{name} passed by: {passing}"


def _sample(name):
    """The first arguments the public check hands the reader's function."""
    from labkit.check import trace_two

    first = {
        "shared_latent_numbers": lambda: trace_two.SHARED_CASES[0],
        "recover_guidance_scale": lambda: trace_two._guided_cases()[0][1],
        "ddim_v_update": lambda: trace_two._noised_cases()[0][1],
    }
    return first[name]()


def _runs(function, *args):
    try:
        with np.errstate(all="ignore"):
            function(*args)
        return True
    except Exception:
        return False


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_pair_of_kit_callables_composed_passes(name, tmp_path, monkeypatch):
    """g(f(arguments)): f taking the arguments as they are or adapted, g taking f's result (pairs that
    cannot even run on the check's first arguments are left out: they cannot pass)."""
    monkeypatch.chdir(tmp_path)
    spec, sample, callables = check.exercises()[name], _sample(name), pool(PAGES[name])
    inner = [
        (f"{label}(arguments {i})", f, shape)
        for (label, f), (i, shape) in itertools.product(callables.items(), enumerate(SHAPES[name]))
        if _runs(lambda f=f, shape=shape: f(*shape(sample)))
    ]
    passing, tried = [], 0
    for (f_label, f, shape), (g_label, g) in itertools.product(inner, callables.items()):
        candidate = lambda *a, f=f, g=g, s=shape: g(f(*s(a)))  # noqa: E731
        if _runs(candidate, *sample):
            tried += 1
            if _passes(spec, candidate):
                passing.append(f"{g_label}({f_label})")
    assert inner and tried, "the composition test tried nothing"
    assert not passing, f"{name} passed by: {passing}"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_number_the_pages_print_passes(name):
    spec = check.exercises()[name]
    numbers = sorted({n for page in PAGES.values() for n in printed_numbers(page)})
    assert len(numbers) > 20
    constants = [lambda *a, n=n: n for n in numbers] + [lambda *a, n=n: (n, n - 1) for n in numbers]
    constants += [lambda *a, n=n, m=m: (n, m) for n, m in ((5.0, 4.0), (5.0, 6.0), (1.0, 0.0))]
    assert not [c for c in constants if _passes(spec, c)]


def test_the_old_exercises_shortcuts_fail():
    """``ddim_step`` plus a table lookup (the old ddim_update's one-line pass) and the old derive answers."""
    from labkit.diffusion import ddim_step

    specs = check.exercises()
    assert not specs["ddim_v_update"](lambda z, v, t, p, ab: ddim_step(*_lookup((z, v, t, p, ab)))).passed
    assert not specs["shared_latent_numbers"](lambda s, a, b: 4096).passed
    assert not specs["recover_guidance_scale"](lambda b, g: (5.0, 4.0)).passed


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_class_copy_holds_no_reference_no_answer_and_no_hidden_case(name):
    with without_key():
        spec = check.exercises()[name]
        assert (spec.reference, spec.cases, spec.answer, spec.runs) == (None, None, None, None)
        module = importlib.import_module("labkit.check.trace_two")
        assert getattr(vars(module).get(name), "reference", None) is None  # the kit's name is the Exercise
    source = inspect.getsource(importlib.import_module("labkit.check.trace_two"))
    for formula in ("// 4 - abs", "difference @ deviation", "a * z - b * velocity"):
        assert formula not in source


def test_the_stub_is_not_attempted_and_a_wrong_answer_never_shows_the_reference():
    specs = check.exercises()
    rng = np.random.default_rng(0)
    wrong = {
        "shared_latent_numbers": lambda s, a, b: 1,
        "recover_guidance_scale": lambda b, g: (rng.normal(), rng.normal()),
        "ddim_v_update": lambda z, v, t, p, ab: (z, v),
    }
    for name, candidate in wrong.items():
        result = specs[name](candidate)
        text = repr(result) + result._repr_html_()
        assert not result.passed and "def " not in text and "return" not in text
