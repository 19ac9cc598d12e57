"""The three trace runtimes have one shape (labkit.core.runtime): a frozen ``Config`` with one
way to derive a changed copy, a frozen ``Hooks`` dataclass of substitutable pieces, and
``run(config=None, hooks=None, *, resources…) -> Run`` whose ``Run`` holds the config and the
events; each runner is short, one function per group of events."""

import ast
import dataclasses
import importlib
import inspect
import pathlib
import re
import textwrap
import typing

import pytest

from labkit.core.runtime import Config, Hooks
from labkit.trace.kinds import KINDS

#: a field of each kind's Config and another value for it
CHANGES = {"text": ("max_output_tokens", 5), "diffusion": ("seed", 7), "tool": ("retry_budget", 2)}
#: (runtime, Config, Hooks, run, Run, a field and another value for it), read from the registry
RUNTIMES = [
    (k.name, k.config, k.hooks, k.run, typing.get_type_hints(k.run)["return"], CHANGES[k.name]) for k in KINDS.values()
]
#: the modules a runner's functions live in, beside the runner's own
PHASE_MODULES = {"tool": ("labkit.tools.phases", "labkit.tools.calls")}
IDS = [r[0] for r in RUNTIMES]
MAX_STATEMENTS = 40


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_config_is_frozen_and_changes_through_replace_only(name, config, hooks, run, result, change):
    assert issubclass(config, Config) and dataclasses.is_dataclass(config)
    assert config.__dataclass_params__.frozen, f"{name}: Config must be frozen"
    base = config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(base, change[0], change[1])
    changed = base.replace(**{change[0]: change[1]})
    assert getattr(changed, change[0]) == change[1] and base == config()
    with pytest.raises(ValueError, match="has no field 'no_such_field'"):
        base.replace(no_such_field=1)
    others = [m for m in ("with_changes", "named", "but") if hasattr(config, m)]
    assert not others, f"{name}: a second way to derive a config: {others}"


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_hooks_are_a_frozen_dataclass_of_optional_functions(name, config, hooks, run, result, change):
    assert issubclass(hooks, Hooks) and dataclasses.is_dataclass(hooks) and hooks.__dataclass_params__.frozen
    assert all(f.default is None and getattr(hooks(), f.name) is None for f in dataclasses.fields(hooks))
    for field in dataclasses.fields(hooks):
        assert "signature" in field.metadata, f"{name}: hooks.{field.name} is no hook(signature)"
        with pytest.raises(ValueError, match=re.escape(f"hooks.{field.name} must be {field.metadata['signature']} or")):
            hooks(**{field.name: 3})


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_run_takes_config_and_hooks_and_returns_a_run_with_events(name, config, hooks, run, result, change):
    parameters = list(inspect.signature(run).parameters.values())
    assert [p.name for p in parameters[:2]] == ["config", "hooks"], f"{name}: run{inspect.signature(run)}"
    assert all(p.default is None for p in parameters[:2])
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters[2:]), f"{name}: resources must be keyword-only"
    assert inspect.signature(run).return_annotation in (result.__name__, result)
    fields = {f.name for f in dataclasses.fields(result)}
    assert {"config", "rec", "events"} <= fields, f"{name}: {result.__name__} lacks config, rec or events"


def _statements(function) -> int:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return sum(isinstance(node, ast.stmt) for node in ast.walk(tree)) - 1


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_every_function_of_the_runtime_is_short_and_flat(name, config, hooks, run, result, change):
    modules = [inspect.getmodule(run), *map(importlib.import_module, PHASE_MODULES.get(name, ()))]
    functions = [
        f
        for module in modules
        for _, f in inspect.getmembers(module, inspect.isfunction)
        if f.__module__ == module.__name__
    ]
    assert run in functions and len(functions) >= 6, f"{name}: {[f.__name__ for f in functions]}"
    for function in functions:
        assert _statements(function) <= MAX_STATEMENTS, f"{function.__name__}: {_statements(function)} statements"
        nested = [
            n.name
            for n in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function))).body[0])
            if isinstance(n, ast.FunctionDef)
        ][1:]
        assert not nested, f"{function.__name__} defines {nested} inside itself"


def test_the_statement_count_can_fail():
    def long():
        a = 0
        for i in range(3):
            a += i
        return a

    assert _statements(long) == 4


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_a_bad_config_or_hook_is_one_exception_type(name, config, hooks, run, result, change):
    with pytest.raises(ValueError, match=f"hooks must be a {hooks.__name__}, got dict"):
        run(None, {"processors": None})
    if name != "tool":  # the tool runtime takes any ToolRunConfig-like object today
        with pytest.raises(ValueError, match=f"config must be a {config.__name__}, got str"):
            run("fast")


#: each kind's steps, in event order: (module, name of the tuple)
STEPS = {
    "text": ("labkit.text.runtime", "STEPS"),
    "diffusion": ("labkit.diffusion.pipeline", "STEPS"),
    "tool": ("labkit.tools.phases", "PHASES"),
}
LABKIT = pathlib.Path(__file__).resolve().parents[1] / "labkit"


@pytest.mark.parametrize(("name", "config", "hooks", "run", "result", "change"), RUNTIMES, ids=IDS)
def test_the_runner_drives_a_tuple_of_steps_through_the_one_loop(name, config, hooks, run, result, change):
    module, attribute = STEPS[name]
    steps = getattr(importlib.import_module(module), attribute)
    assert isinstance(steps, tuple) and len(steps) >= 4, f"{name}: {attribute} must be a tuple of steps"
    for step in steps:
        assert list(inspect.signature(step).parameters)[:1] == ["run"], f"{name}: {step.__name__} is not step(run)"
    assert "run_steps(" in inspect.getsource(run), f"{name}: {run.__name__} does not call core.runtime.run_steps"


def step_loops(source: str) -> list[int]:
    """Lines where a loop over a tuple of steps (STEPS, PHASES, EXECUTION…) calls each step."""
    found = []
    for node in ast.walk(ast.parse(source)):
        loops = [(node.target, node.iter, node)] if isinstance(node, ast.For) else []
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            loops += [(g.target, g.iter, node) for g in node.generators]
        for target, over, body in loops:
            if isinstance(over, ast.Name) and over.id in ("STEPS", "PHASES", "EXECUTION", "steps"):
                calls = [c for c in ast.walk(body) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
                if isinstance(target, ast.Name) and any(c.func.id == target.id for c in calls):
                    found.append(node.lineno)
    return found


def test_the_steps_of_a_trace_are_looped_over_in_one_place():
    loops = {
        str(path.relative_to(LABKIT)): lines
        for path in sorted(LABKIT.rglob("*.py"))
        if (lines := step_loops(path.read_text(encoding="utf-8")))
    }
    assert loops == {"core/runtime.py": loops.get("core/runtime.py")} and loops["core/runtime.py"], loops


def test_a_second_step_loop_is_found():
    written_twice = "s = next((s for s in (phase(run) for phase in EXECUTION) if s is not None), 'completed')"
    assert step_loops(written_twice) == [1]


def trace_section(text: str) -> list[str]:
    """The lines of CONTRIBUTING.md's "A trace" section, between its ``<!-- a trace -->`` markers."""
    parts = text.split("<!-- a trace -->")
    assert len(parts) == 3, "CONTRIBUTING.md needs one 'A trace' section between two <!-- a trace --> markers"
    return [line for line in parts[1].splitlines() if line.strip()]


def test_contributing_describes_the_one_shape_in_at_most_30_lines():
    lines = trace_section((LABKIT.parent / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    assert 5 <= len(lines) <= 30, f"'A trace' is {len(lines)} lines; the one shape fits in 30"
    section = "\n".join(lines)
    for name, config, _hooks, _run, result, _ in RUNTIMES:  # every registered kind's pieces, by their names
        module, attribute = STEPS[name]
        named = [config.__name__, result.__name__, f"{module.removeprefix('labkit.')}.{attribute}"]
        missing = [n for n in named if f"`{n}`" not in section]
        assert not missing, f"'A trace' does not name {missing} of the {name} trace"
    assert "`run_steps(steps, run)`" in section and "`checked_run_arguments`" in section


def test_the_section_count_can_fail():
    long = "<!-- a trace -->\n" + "- a line\n" * 31 + "<!-- a trace -->"
    assert len(trace_section(long)) == 31
    with pytest.raises(AssertionError, match="needs one 'A trace' section"):
        trace_section("no markers")
