"""Import costs: what a fresh process pays before it computes anything.

Every ``labkit`` command and every notebook kernel starts cold, so a heavy import is paid
on every run. Each module is imported in a new ``python -c "import M"`` process (with the
``make`` environment, so matplotlib's font cache is warm); the cost reported is the wall
time above a bare ``python -c "pass"`` timed in the same rounds.
"""

from __future__ import annotations

import importlib.util
import sys

from benchmarks.book import REPO, make_environment
from benchmarks.stats import interleaved, run_command

MODULES = (
    "numpy",
    "matplotlib.pyplot",
    "ipywidgets",
    "jsonschema",
    "fastjsonschema",
    "labkit",
    "labkit.labs.report",
    "labkit.text.runtime",
    "labkit.diffusion.pipeline",
    "labkit.tools.runtime",
)
#: Statements timed beside the plain imports: label → (module that must exist, statement).
STATEMENTS = {
    "labkit.cli (build the labkit parser)": ("labkit.cli", "from labkit.cli import build_parser; build_parser()"),
    "jsonschema as labkit imports it (no unused format plugins)": (
        "labkit.core.strictjson",
        "from labkit.core.strictjson import import_jsonschema; import_jsonschema()",
    ),
}


def _present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def labels(modules=MODULES, statements=None) -> list[str]:
    """The row labels of the section, in order: the modules, then the statements."""
    return [*modules, *(STATEMENTS if statements is None else statements)]


def import_costs(repeats: int = 3, modules=MODULES, statements=None) -> dict:
    """{"available", "reason", "bare_python_seconds", "modules": [{module, available, seconds, above_bare_seconds}]}"""
    env = make_environment(REPO)
    statements = STATEMENTS if statements is None else statements
    code = {m: f"import {m}" for m in modules if _present(m)}
    code.update({label: stmt for label, (needs, stmt) in statements.items() if _present(needs)})
    runners = {"(bare python)": lambda: run_command([sys.executable, "-c", "pass"], cwd=REPO, env=env)}
    for label, stmt in code.items():
        runners[label] = lambda c=stmt: run_command([sys.executable, "-c", c], cwd=REPO, env=env)
    stats = interleaved(runners, repeats)
    bare = stats.pop("(bare python)")
    rows = []
    for module in labels(modules, statements):
        if module in stats:
            rows.append(
                {
                    "module": module,
                    "available": True,
                    "seconds": stats[module],
                    "above_bare_seconds": stats[module]["median"] - bare["median"],
                }
            )
        else:
            rows.append({"module": module, "available": False, "seconds": None, "above_bare_seconds": None})
    return {"available": True, "reason": None, "bare_python_seconds": bare, "modules": rows}
