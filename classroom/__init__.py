"""The class's tools for *Inside One Generation*: a copy to hand out, grading hand-ins, an otter-grader export.

A sibling of ``labkit`` in the book's repository: it imports ``labkit``, and ``labkit`` never imports
it (``tests/test_layers.py``).  ``python -m classroom copy|grade|otter``; ``make class-copy DEST=…`` and
``make grade HANDINS=… OUT=…`` are the stable entry points.  The answer runner (``runner.py``, its child
and wire) serves both the grader and ``labkit check NAME --file``, which takes it from the book's folder.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: ``python -m classroom COMMAND``: command → (module, help)
COMMANDS = {
    "copy": ("classcopy", "write a copy of the book without its answer key, to hand out"),
    "grade": ("grade", "grade a folder of hand-ins, each in its own sandbox: CSV, scores, feedback files"),
    "otter": ("otter", "write an otter-grader autograder (zip) for the graded exercises"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m classroom", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    for name, (module, help_text) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if not words or words[0] == name:  # only the chosen command's module is imported
            target = importlib.import_module(f"classroom.{module}")
            target.configure(sub)
            sub.set_defaults(_run=target.run)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"python -m classroom: error: {exc}", file=sys.stderr)
        return 2
