"""Every English template the checks can say, found in the source by its syntax tree (``say("…")``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "labkit" / "check").glob("*.py")) + [ROOT / "labkit" / "cli" / "check.py"]
#: the calls of ``say`` on a name, and the values that name can hold (the rest are string constants)
DYNAMIC = {
    "label": "labkit.check.feedback:LABELS",
    "self.kind": "labkit.check.core:KINDS",
    "exercise.kind": "labkit.check.core:KINDS",
    "spec.kind": "labkit.check.core:KINDS",
    "must": "labkit.check.trace_three_service:VERBS",
}


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's top-level ``NAME = "text"`` (and ``A, B = "x", "y"``) assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            pairs = zip(target.elts, value.elts, strict=False) if isinstance(target, ast.Tuple) else [(target, value)]
            for name, text in pairs:
                if isinstance(name, ast.Name) and isinstance(text, ast.Constant) and isinstance(text.value, str):
                    found[name.id] = text.value
    return found


def _imported_constants() -> dict[str, str]:
    found = {}
    for path in SOURCES:
        found.update(_constants(ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _local_templates(tree: ast.Module, call: ast.Call) -> set[str]:
    """The string constants assigned to ``text`` in the function holding ``call``."""
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.lineno <= call.lineno <= function.end_lineno:
            inner = function
    return {
        node.value.value
        for node in ast.walk(inner)
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) == "text"
        and isinstance(node.value, ast.Constant)
    }


def templates() -> tuple[set[str], list[str]]:
    """(every template ``say`` is called with, the calls whose argument is neither a constant nor known)."""
    import importlib

    known = _imported_constants()
    found, unknown = set(), []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "say"):
                continue
            if not node.args:
                continue  # the definition's own forwarding call has a name
            arg = node.args[0]
            text = ast.unparse(arg)
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
            elif isinstance(arg, ast.Name) and arg.id == "text":  # a local template: the assignment just before
                found.update(_local_templates(tree, node))
            elif isinstance(arg, ast.Name) and arg.id in known:
                found.add(known[arg.id])
            elif text in DYNAMIC:
                module, name = DYNAMIC[text].split(":")
                found.update(getattr(importlib.import_module(module), name))
            elif text != "template":
                unknown.append(f"{path.name}:{node.lineno}: say({text})")
    return found, unknown


def needs_words(template: str) -> bool:
    """Whether ``template`` has words to translate (``"{where}{index}"`` has none)."""
    import string

    try:
        plain = "".join(literal for literal, *_ in string.Formatter().parse(template))
    except ValueError:  # a template without fields is not formatted: its braces are text
        plain = template
    return any(c.isalpha() for c in plain)
