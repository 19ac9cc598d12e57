"""``labkit check``: list the book's exercises, or check a solution file against one.

    labkit check                              every exercise, with its signature and page
    labkit check --page 11-labs               the exercises of some pages
    labkit check rms_norm                     one exercise: what to write
    labkit check rms_norm --file answer.py    run answer.py's rms_norm through the checker

Exit status: 0 when the answer passes (or for a listing), 1 when it does not, 2 when the
command cannot run (unknown exercise, unreadable file, no such function in it).
"""

from __future__ import annotations

import sys
from pathlib import Path


def configure(parser) -> None:
    parser.description = (
        "List the book's self-checking exercises, or check a solution file "
        "against one: labkit check NAME --file my_answer.py"
    )
    parser.add_argument("name", nargs="?", help="an exercise (without it: list them all)")
    parser.add_argument("--file", type=Path, metavar="PATH", help="a Python file that defines the exercise's function")
    parser.add_argument(
        "--function", metavar="NAME", help="the function in --file to check (default: the exercise's name)"
    )
    parser.add_argument(
        "--more", action="store_true", help="show the rule and the precise hint at once (as result.more() does)"
    )
    parser.add_argument("--page", help="only the exercises of pages whose path contains this text")


def run(args) -> int:
    import labkit.check as check

    specs = check.exercises()
    if args.name is None:
        if args.file or args.function:
            return _fail("name the exercise to check the file against: labkit check NAME --file PATH")
        for name, spec in specs.items():
            if args.page and args.page not in spec.page:
                continue
            print(f"{name}({', '.join(spec.signature)})  {spec.kind}  [{spec.page}]\n    {spec.task}")
        return 0
    if args.name not in specs:
        return _fail(f"no exercise {args.name!r}; `labkit check` lists the {len(specs)} exercises")
    spec = specs[args.name]
    if args.file is None:
        print(
            f"{spec.name}({', '.join(spec.signature)})  [{spec.page}]\n    {spec.task}\n"
            f"check a solution with: labkit check {spec.name} --file my_answer.py"
        )
        return 0
    try:
        candidate = load_function(args.file, args.function or spec.name)
    except ValueError as problem:
        return _fail(str(problem))
    from labkit.check import feedback

    result = spec(candidate)
    level = 2 if args.more else result.level
    print(feedback.as_text(result, level, prompt="run again with --more for the rule and a precise hint"))
    return 0 if result.passed else 1


def load_function(path: Path, name: str):
    """The function ``name`` defined by the Python file ``path`` (the file is run once)."""
    import importlib.util
    import inspect

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--file must be an existing Python file, got {str(path)!r}")
    spec = importlib.util.spec_from_file_location(f"labkit_check_answer_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--file must be a Python file (.py), got {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # the answer may import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ValueError(f"{path.name} does not parse: {exc.msg} (line {exc.lineno})") from None
    except Exception as exc:
        raise ValueError(f"running {path.name} raised {type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(str(path.resolve().parent))
    found = getattr(module, name, None)
    if not callable(found):
        defined = sorted(
            n for n, f in vars(module).items() if inspect.isfunction(f) and f.__module__ == module.__name__
        )
        raise ValueError(
            f"{path.name} defines no function {name!r}"
            + (f" (it defines: {', '.join(defined)}; choose one with --function)" if defined else "")
        )
    return found


def _fail(message: str) -> int:
    print(f"labkit check: {message}", file=sys.stderr)
    return 2
