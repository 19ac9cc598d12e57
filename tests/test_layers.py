"""labkit's layers, as written in CONTRIBUTING.md, hold in the code.

Every import of every labkit module — at the top of the file or inside a function — is read
with ``ast`` and checked against the layer diagram of CONTRIBUTING.md: an import may point
down or sideways, never up, and no chain of imports may come back to where it started.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "labkit"
MAX_LINES = 350
#: modules another part of issue 16 is splitting (its runner, one function per event group);
#: an entry that is no longer over the limit fails the test, so the list cannot go stale
BEING_SPLIT: dict[str, str] = {}


def layer_diagram(text: str | None = None) -> list[tuple[str, list[str]]]:
    """The diagram between ``<!-- layers -->`` markers, top layer first: (name, paths)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8") if text is None else text
    block = re.search(r"<!-- layers -->\n```text\n(.*?)```", text, re.S)
    assert block, "CONTRIBUTING.md has no layer diagram between <!-- layers --> markers"
    layers = []
    for line in block.group(1).splitlines():
        paths = re.findall(r"labkit/[\w/{},.]*", line)
        if not paths:
            continue
        expanded = []
        for path in paths:
            braces = re.fullmatch(r"(.*)\{(.*)\}(.*)", path)
            expanded += (
                [braces.group(1) + part + braces.group(3) for part in braces.group(2).split(",")] if braces else [path]
            )
        layers.append((line.split()[0], expanded))
    return layers


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str, layers: list[tuple[str, list[str]]]) -> tuple[int, str]:
    """(rank, name): rank 0 is the bottom layer.  The most specific path of the diagram wins."""
    path = MODULES[module].relative_to(ROOT).as_posix()
    best = None
    for index, (name, paths) in enumerate(layers):
        for prefix in paths:
            hit = path == prefix if prefix.endswith(".py") else path.startswith(prefix)
            if hit and (best is None or len(prefix) > best[0]):
                best = (len(prefix), len(layers) - 1 - index, name)
    assert best is not None, f"{path} is in no layer of CONTRIBUTING.md's diagram"
    return best[1], best[2]


def imports_of(module: str, source: str | None = None) -> list[tuple[str, int]]:
    """Every labkit module ``module`` imports, anywhere in its file (or in ``source``):
    (target, line)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    source = path.read_text(encoding="utf-8") if source is None else source
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full if full in MODULES else base, node.lineno))
    return [(target, line) for target, line in found if target.split(".")[0] == "labkit" and target in MODULES]


def upward_imports(layers) -> list[str]:
    problems = []
    for module in MODULES:
        rank, name = layer_of(module, layers)
        for target, line in imports_of(module):
            target_rank, target_name = layer_of(target, layers)
            if target_rank > rank:
                problems.append(f"{module} ({name}) imports {target} ({target_name}) at line {line}")
    return problems


def import_cycles(graph: dict[str, list[str]] | None = None) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan) in the import graph."""
    if graph is None:
        graph = {m: sorted({t for t, _ in imports_of(m) if t != m}) for m in MODULES}
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    return groups


def test_every_module_is_in_a_layer_of_the_diagram():
    layers = layer_diagram()
    assert [name for name, _ in layers][-1] == "core", "the diagram lists the top layer first"
    for module in MODULES:
        layer_of(module, layers)


def test_no_import_points_up():
    problems = upward_imports(layer_diagram())
    assert not problems, "imports that point up the layers:\n" + "\n".join(problems)


def test_no_import_cycle():
    cycles = import_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_walker_sees_function_level_and_relative_imports():
    """The walker itself can fail: an import inside a function, or a relative one, is found."""
    source = (
        "def f():\n"
        "    if True:\n"
        "        from labkit.reader import Table\n"
        "    from ..trace import divergence\n"
        "    import labkit.cli.labs\n"
    )
    found = imports_of("labkit.core.events", source)
    assert ("labkit.reader", 3) in found and ("labkit.trace.divergence", 4) in found, found
    assert ("labkit.cli.labs", 5) in found, found
    layers = layer_diagram()
    assert layer_of("labkit.reader", layers)[0] > layer_of("labkit.core.events", layers)[0]


def test_the_cycle_finder_finds_a_hidden_cycle():
    graph = {"pipeline": ["denoiser"], "denoiser": ["fixture"], "fixture": ["pipeline"], "ddim": []}
    assert import_cycles(graph) == [["denoiser", "fixture", "pipeline"]]


def test_a_diagram_with_the_layers_swapped_is_violated():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    swapped = (
        text.replace("labkit/core/", "labkit/CORE/")
        .replace("labkit/cli/", "labkit/core/")
        .replace("labkit/CORE/", "labkit/cli/")
    )
    assert upward_imports(layer_diagram(swapped)), "swapping core and cli must produce upward imports"


@pytest.mark.parametrize("module", ["labkit.diffusion.ddim"])
def test_a_kernel_loads_only_the_kernels_it_uses(module):
    code = f"import sys, {module}\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('labkit'))))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout.split()
    layers = layer_diagram()
    kernels = {
        m for m in loaded if layer_of(m, layers)[1] in ("core", "kernels") or m in ("labkit", "labkit.diffusion")
    }
    assert set(loaded) == kernels, f"import {module} loads {sorted(set(loaded) - kernels)}"
    assert not any(m.startswith(("labkit.nn", "labkit.core.events", "labkit.reader")) for m in loaded)
    assert "labkit.diffusion.pipeline" not in loaded


def test_the_serving_layer_sits_above_the_domains_and_its_paged_cache_is_a_kernel():
    """Issue 45: the engine composes trace one's runtime (a domain) with the kernels; the paged cache
    is a mechanism a page shows, so importing it loads core and nothing else of labkit."""
    layers = layer_diagram()
    assert layer_of("labkit.serving.engine", layers)[1] == "serving"
    assert layer_of("labkit.serving.paged", layers)[1] == "kernels"
    rank = {m: layer_of(m, layers)[0] for m in ("labkit.text.runtime", "labkit.serving.engine", "labkit.trace.kinds")}
    assert rank["labkit.text.runtime"] < rank["labkit.serving.engine"] < rank["labkit.trace.kinds"]
    code = "import sys, labkit.serving.paged\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('labkit'))))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    assert {layer_of(m, layers)[1] for m in loaded.stdout.split() if m not in ("labkit", "labkit.serving")} == {
        "core",
        "kernels",
    }


CLASSROOM = ROOT / "classroom"


def _imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found


#: the packages beside labkit in the book's clone: each imports labkit, labkit imports none of them
SIBLINGS = ("booktools", "harness", "booklab", "classroom", "answer_key", "benchmarks")


def labkit_imports_of_siblings(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module → the sibling packages it imports anywhere in its file (function-level imports included)."""
    found = {m: _imported_packages(p) & set(SIBLINGS) for m, p in modules.items()}
    return {m: names for m, names in found.items() if names}


def test_labkit_never_imports_a_package_beside_it():
    """The book's maintenance tools, the crash/race harness, the book's JupyterLab, the class's tools, the
    teacher's key and the benchmarks sit beside labkit and import it; labkit never imports them, not even
    inside a function (``labkit lab`` loads booklab from the book's folder: ``labkit.cli.from_book``)."""
    for sibling in SIBLINGS:
        assert (ROOT / sibling / "__init__.py").is_file(), f"{sibling}/ is no package beside labkit"
    assert labkit_imports_of_siblings(MODULES) == {}


def test_the_sibling_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from booklab.launcher import run\n    import harness.report\n")
    assert labkit_imports_of_siblings({"labkit.probe": module}) == {"labkit.probe": {"booklab", "harness"}}


def test_every_sibling_imports_labkit():
    for sibling in SIBLINGS:
        modules = sorted((ROOT / sibling).rglob("*.py"))
        assert any("labkit" in _imported_packages(p) for p in modules), f"{sibling}/ does not import labkit"


def test_the_class_tools_import_labkit_and_stay_short():
    modules = sorted(CLASSROOM.rglob("*.py"))
    assert modules and any("labkit" in _imported_packages(p) for p in modules)
    long = {p.name: n for p in modules if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"classroom modules over {MAX_LINES} lines: {long}"


def test_no_module_is_over_the_line_limit():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    stale = sorted(set(BEING_SPLIT) - set(long))
    assert not stale, f"{stale} are no longer over {MAX_LINES} lines: remove them from BEING_SPLIT"
    long = {m: n for m, n in long.items() if m not in BEING_SPLIT}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_kit_evaluates_its_annotations_as_python_3_11_does():
    """One style for every module of the kit: no ``from __future__ import annotations`` (a method that returns
    its own class says ``Self``; a name imported for type checking only is quoted)."""
    future = sorted(m for m, p in MODULES.items() if "from __future__ import annotations" in p.read_text("utf-8"))
    assert not future, f"modules with from __future__ import annotations: {future}"
