"""An adversarial self-test of labs 01–06's graded exercises, with the key loaded: every callable the page
imports or shows, every public callable of the kit near the mechanism (the labs, labkit.nn, the exercises'
own public check modules, their private helpers too), called with the exercise's arguments as they are or
adapted (the variant's parameter dropped, a boolean mask made of the weights, a batch axis added), its
output as it is or adapted (an item, an attribute), pairs of them composed, and every number the page's
stored outputs print: none passes."""

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

import labkit.check as check
from labkit.check.core import reset_attempts

pytestmark = pytest.mark.slow  # some minutes of candidates: out of `make test-fast`, in `make test`

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = check.exercises()
PAGES = {
    f"notebooks/11-labs/{stem}.md"
    for stem in (
        "01-cross-entropy-gradient",
        "02-masks-and-packing",
        "03-causal-attention",
        "04-kv-cache-equivalence",
        "05-cache-faults",
        "06-dpo",
    )
}
GRADED = sorted(n for n, e in EXERCISES.items() if e.page in PAGES and e.graded)
NEAR = (
    "labkit.labs.common",
    "labkit.labs.masks",
    "labkit.labs.causal_attention",
    "labkit.labs.cache_equivalence",
    "labkit.labs.lab_decoder",
    "labkit.labs.dpo",
    "labkit.labs.bandwidth",
    "labkit.nn",
    "labkit.nn.attention",
    "labkit.nn.cache",
    "labkit.nn.transformer",
    "labkit.check.labs_i",
    "labkit.check.labs_i_cache",
)


def _page_imports(page: Path) -> dict[str, object]:
    """Every labkit name a page's code cells import, and what ``show_source`` shows."""
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    found = {}
    for cell in cells:
        tree = ast.parse("\n".join(line for line in cell.splitlines() if not line.startswith(("%", "!", ":"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    found[alias.asname or alias.name] = getattr(module, alias.name, None) or importlib.import_module(
                        f"{node.module}.{alias.name}"
                    )
    return found


def _callables(objects: dict[str, object]) -> dict[str, object]:
    """The callables among ``objects`` and the labkit callables of the modules and classes among them."""
    out = {}
    for name, obj in objects.items():
        if callable(obj) and not inspect.isclass(obj) or inspect.isclass(obj):
            out[name] = obj
        if inspect.ismodule(obj) or inspect.isclass(obj):
            for attr, member in vars(obj).items():
                member = getattr(obj, attr, None)
                if callable(member) and (getattr(member, "__module__", "") or "").startswith("labkit"):
                    out[f"{name}.{attr}"] = member
    return out


def candidates_for(page: str) -> dict[str, object]:
    found = _callables(_page_imports(ROOT / page))
    for module in NEAR:
        found.update(_callables({module: importlib.import_module(module)}))
    found.pop("labkit.check.labs_i", None)
    found.pop("labkit.check.labs_i_cache", None)
    return {k: v for k, v in found.items() if not isinstance(v, check.Exercise)}


def _array_args(args):
    return [np.asarray(a) for a in args]


ARGUMENTS = {  # how a lazy hand-in adapts the exercise's arguments before calling the kit
    "as given": lambda args: args,
    "the variant's parameter dropped": lambda args: args[:-1],
    "the first argument only": lambda args: args[:1],
    "a boolean mask of the weights": lambda args: (*args[:-1], np.asarray(args[-1]) > 0),
    "a batch axis added": lambda args: [a[None] if isinstance(a, np.ndarray) else a for a in args],
    "a batch axis and a causal mask": lambda args: (
        *[a[None] for a in args[:3]],
        np.tril(np.ones((len(args[0]), len(args[0])), dtype=bool)),
    ),
    "a full mask over every key": lambda args: (*args[:1], *args[1:3], np.ones((1, args[1].shape[-2] + 1), bool)),
}
OUTPUTS = {
    "as returned": lambda out: out,
    "item 0": lambda out: out[0],
    "item 1": lambda out: out[1],
    "the last item": lambda out: out[-1],
    "without a batch axis": lambda out: tuple(o[0] for o in out) if isinstance(out, tuple) else out[0],
    "logits": lambda out: out.logits,
    "next_logits": lambda out: out.next_logits,
    "as a bool": lambda out: bool(np.asarray(out).all()),
}


def adapted(fn, arguments, output):
    def candidate(*args):
        return output(fn(*arguments(args)))

    return candidate


def _passes(name: str, candidate) -> bool:
    try:
        return bool(EXERCISES[name](candidate).passed)
    except Exception:  # a candidate the grading cannot even hold is not a pass
        return False


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()
    yield
    reset_attempts()


@pytest.mark.parametrize("name", GRADED)
def test_no_callable_of_the_page_or_the_kit_adapted_passes(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a candidate may write files named after its arguments: keep them out
    found = candidates_for(EXERCISES[name].page)
    passing = [
        f"{label} ({a}, {o})"
        for label, fn in found.items()
        for a, arguments in ARGUMENTS.items()
        for o, output in OUTPUTS.items()
        if _passes(name, adapted(fn, arguments, output))
    ]
    assert not passing, f"{name} is passed by: {passing}"


ONE_ARGUMENT = ("log_softmax", "softmax", "rms_norm", "finite_difference")


@pytest.mark.parametrize("name", GRADED)
def test_no_pair_of_callables_composed_passes(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = candidates_for(EXERCISES[name].page)
    outer = {k: v for k, v in found.items() if k.rsplit(".", 1)[-1] in ONE_ARGUMENT}
    passing = [
        f"{f} ∘ {g}"
        for f, outer_fn in outer.items()
        for g, inner in found.items()
        if _passes(name, lambda *args, o=outer_fn, i=inner: o(i(*args)))
        or _passes(name, lambda *args, o=outer_fn, i=inner: i(o(args[0]), *args[1:]))
    ]
    assert not passing, f"{name} is passed by: {passing}"


def _printed_numbers(page: str) -> set[float]:
    notebook = json.loads((ROOT / page).with_suffix(".ipynb").read_text(encoding="utf-8"))
    text = " ".join(
        "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
    )
    return {float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text)}


@pytest.mark.parametrize("name", GRADED)
def test_no_number_the_page_prints_and_no_constant_verdict_passes(name):
    constants = [*sorted(_printed_numbers(EXERCISES[name].page)), True, False]
    passing = [repr(c) for c in constants if _passes(name, lambda *args, c=c: c)]
    assert not passing, f"{name} is passed by the constant(s) {passing}"


def test_the_attempts_are_many_and_the_right_answer_is_among_the_reachable_forms():
    """The search is real: it tries hundreds of candidates per exercise, and the kit's causal attention with
    the slope dropped (the page's own kernel) is among them and fails only the ALiBi properties."""
    found = candidates_for("notebooks/11-labs/03-causal-attention.md")
    assert len(found) * len(ARGUMENTS) * len(OUTPUTS) > 1000
    kernel = adapted(found["attention"], ARGUMENTS["a batch axis and a causal mask"], OUTPUTS["without a batch axis"])
    result = EXERCISES["alibi_causal_attention"](kernel)
    assert not result.passed and "slope 0.5" in result.where
