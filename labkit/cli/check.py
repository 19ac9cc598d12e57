"""``labkit check``: list the book's exercises, or check a solution file against one.

    labkit check                              every exercise, with its signature and page
    labkit check --page 11-labs               the exercises of some pages
    labkit check largest_min_p                 one exercise: what to write
    labkit check largest_min_p --file answer.py  run answer.py's largest_min_p through the checker
    labkit check x0_fed_as_epsilon --reveal    the answer, on purpose (a prediction's; a graded one's needs the key)

The answer runs in a child process under limits (``labkit.cli.runner``: the reader's own code, on the
reader's own account — no sandbox, which only grading a class needs: ``python -m classroom grade``);
the checker and its verdict stay in this one.  Exit status: 0 when the answer passes (or for a listing), 1 when it
does not, 2 when it could not be checked (unknown exercise, unreadable file, no such function
in it, a limit overrun, the answer's process ending before it gave a result).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
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
    parser.add_argument(
        "--reveal", action="store_true", help="show the answer on purpose (a prediction's, or any with the key loaded)"
    )
    parser.add_argument(
        "--timeout", type=seconds, default=60.0, metavar="SECONDS", help="wall-clock limit for the answer (default 60)"
    )


def say(template: str, **fields) -> str:
    from labkit.check.feedback import say

    return say(template, **fields)


def _reveal(spec) -> int:
    """Print the answer of ``spec``: a prediction's run, or — where the teacher's key is loaded — any."""
    try:
        print(repr(spec.reveal()))
    except LookupError as missing:
        command = f'python -c "import answer_key, labkit.check as c; print(c.reveal({spec.name!r}))"'
        return fail(say("{missing} (in the full book: {command})", missing=missing, command=command))
    return 0


def seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds in (0, 3600], got {text!r}")
    return value


def run(args) -> int:
    import labkit.check as check
    from labkit.check import feedback

    specs = check.exercises()
    if args.name is None:
        if args.file or args.function:
            return fail(say("name the exercise to check the file against: labkit check NAME --file PATH"))
        for name, spec in specs.items():
            if args.page and args.page not in spec.page:
                continue
            print(f"{name}({', '.join(spec.signature)})  {say(spec.kind)}  [{spec.page}]\n    {spec.text('task')}")
        return 0
    if args.name not in specs:
        return fail(
            say("no exercise {name!r}; `labkit check` lists the {count} exercises", name=args.name, count=len(specs))
        )
    spec = specs[args.name]
    if args.reveal:
        return _reveal(spec)
    if args.file is None:
        print(f"{spec.name}({', '.join(spec.signature)})  [{spec.page}]\n    {spec.text('task')}")
        print(say("check a solution with: labkit check {name} --file my_answer.py", name=spec.name))
        return 0
    verdict = check_file(spec, args.file, args.function or spec.name, args.timeout)
    if verdict.printed:
        print(say("{file} printed:", file=args.file.name) + f"\n{verdict.printed}", file=sys.stderr)
    if verdict.status == "could not check":
        return fail(say("could not check: {reason}", reason=verdict.text))
    level = 2 if args.more else verdict.result.level
    prompt = say("run again with --more for the rule and a precise hint")
    print(feedback.as_text(verdict.result, level, prompt=prompt))
    return 0 if verdict.status == "passed" else 1


@dataclass
class Verdict:
    """One answer file's verdict on one exercise: ``status`` is passed, failed or could not check."""

    status: str
    text: str
    result: object = None
    printed: str = ""


def check_file(spec, path: Path, name: str, seconds: float = 60.0) -> Verdict:
    """Run ``path``'s ``name`` through ``spec`` with the answer in a child process under limits."""
    from labkit.check import feedback
    from labkit.cli import runner

    path = Path(path)
    if not path.is_file():
        return Verdict("could not check", say("--file must be an existing Python file, got {path!r}", path=str(path)))
    child = runner.Runner([path], runner.Limits(seconds=seconds), wanted=(name,))
    try:
        with child:
            result = spec(child.candidate(name))
    except runner.Unusable as problem:
        return Verdict("could not check", str(problem), printed=child.printed)
    except runner.CouldNotCheck as problem:
        return Verdict("could not check", str(problem), printed=child.printed)
    except Exception as problem:  # the checker choked on what the answer sent: never a pass
        reason = say(
            "the checker failed on this answer ({kind}: {problem})", kind=type(problem).__name__, problem=problem
        )
        return Verdict("could not check", reason)
    first = feedback.as_text(result, 1, prompt="").splitlines()[0]
    return Verdict("passed" if result.passed else "failed", first, result, child.printed)


def fail(message: str, command: str = "check") -> int:
    print(f"labkit {command}: {message}", file=sys.stderr)
    return 2
