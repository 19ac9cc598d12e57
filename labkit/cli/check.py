"""``labkit check``: list the book's exercises, or check a solution file against one.

    labkit check                                 every exercise, with its signature and page
    labkit check --page 11-labs                  the exercises of some pages
    labkit check largest_min_p                   one exercise: what to write
    labkit check largest_min_p --file answer.py  run answer.py's largest_min_p through the checker
    labkit check x0_fed_as_epsilon --reveal      the answer, on purpose (a prediction's; a graded one's needs the key)

The answer runs in a child process under limits, with the runner of the book's folder (``classroom/runner.py``:
a clone or a class copy); it is the reader's own code on the reader's own account, so no sandbox (only grading a
class needs one: ``python -m classroom grade``).  The checker and its verdict stay in this process.  Exit status:
0 when the answer passes (or for a listing), 1 when it does not, 2 when it could not be checked (unknown exercise,
unreadable file, no such function in it, a limit overrun, the answer's process ending before it gave a result).
"""

import argparse
import sys
from pathlib import Path

from labkit.cli import from_book


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


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds in (0, 3600], got {text!r}")
    return value


def run(args) -> int:
    import labkit.check as check
    from labkit.check.feedback import say

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
        try:
            print(repr(spec.reveal()))
        except LookupError as missing:
            command = f'python -c "import answer_key, labkit.check as c; print(c.reveal({spec.name!r}))"'
            return fail(say("{missing} (in the full book: {command})", missing=missing, command=command))
        return 0
    if args.file is None:
        print(f"{spec.name}({', '.join(spec.signature)})  [{spec.page}]\n    {spec.text('task')}")
        print(say("check a solution with: labkit check {name} --file my_answer.py", name=spec.name))
        return 0
    return check_file(spec, args, say)


def check_file(spec, args, say) -> int:
    """Run ``args.file``'s function through ``spec``, the answer in a child process under limits."""
    from labkit.check import feedback

    if not args.file.is_file():
        reason = say("--file must be an existing Python file, got {path!r}", path=str(args.file))
        return fail(say("could not check: {reason}", reason=reason))
    runner = from_book("classroom.runner", "check --file", "run it inside a clone of the book or a class copy")
    name = args.function or spec.name
    child = runner.Runner([args.file], runner.Limits(seconds=args.timeout), wanted=(name,))
    reason, shown = None, True  # shown: whether the answer's printout is passed on (not when the checker failed)
    try:
        with child:
            result = spec(child.candidate(name))
    except (runner.Unusable, runner.CouldNotCheck) as problem:
        reason = str(problem)
    except Exception as problem:  # the checker choked on what the answer sent: never a pass
        # the checker failed, not the answer: its printout would mislead
        kind, shown = type(problem).__name__, False
        reason = say("the checker failed on this answer ({kind}: {problem})", kind=kind, problem=problem)
    if child.printed and shown:
        print(say("{file} printed:", file=args.file.name) + f"\n{child.printed}", file=sys.stderr)
    if reason is not None:
        return fail(say("could not check: {reason}", reason=reason))
    prompt = say("run again with --more for the rule and a precise hint")
    print(feedback.as_text(result, 2 if args.more else result.level, prompt=prompt))
    return 0 if result.passed else 1


def fail(message: str) -> int:
    print(f"labkit check: {message}", file=sys.stderr)
    return 2
