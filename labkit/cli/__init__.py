"""The ``labkit`` command.  Every command is a module with ``configure(parser)`` and ``run(args) -> int``, named by
one line of a table (``COMMANDS``, ``TRACE_COMMANDS``, ``BOOK_COMMANDS``) and imported only when it runs (``lazy``, the
CLI's one lazy point), so ``labkit --help`` imports none of them; a command whose work is heavier than its parser
takes that work with ``lazy`` in its ``run`` (``labkit labs``).  The book's JupyterLab (``booklab/``), the fixture
recipes (``booktools/``) and the answer runner of ``labkit check --file`` (``classroom/``) come with the book's clone:
``from_book`` takes them from its folder.
"""

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from types import ModuleType

from labkit import __version__


@dataclass(frozen=True)
class Command:
    """A command: its one-line help and the module (``configure``, ``run``) that runs it; a command of the book's
    clone names the ``make`` target that sets a clone up for it (its one-line refusal outside one says so)."""

    help: str
    module: str
    make: str = "make lab"


#: ``labkit COMMAND``
COMMANDS = {
    "labs": Command("run the eight mechanism labs of chapter 11 and write their JSON report", "labkit.cli.labs"),
    "faults": Command("run the fault-injection supplement and write its JSON report", "labkit.cli.faults"),
    "check": Command("list the exercises, or check a solution file against one", "labkit.cli.check"),
}
#: ``labkit trace COMMAND`` beside the kinds
TRACE_COMMANDS = {"diff": Command("first divergence between two traces", "labkit.cli.diff")}
#: ``labkit COMMAND`` for the commands that come with the book's clone (``booklab/``, ``booktools/`` in its folder)
BOOK_COMMANDS = {
    "lab": Command("open the book in JupyterLab at its first page (what `make lab` does)", "booklab.launcher"),
    "reset": Command(
        "bring a page, or every page, back to the book's original (your edits set aside)", "booklab.edits"
    ),
    "fixtures": Command(
        "build the fixtures, or check them against their recipes",
        "booktools.fixtures",
        "make setup",
    ),
}
ABOUT_TRACE = "run or compare the execution traces of chapter 7"


class _Parser(argparse.ArgumentParser):
    """The trace commands' parser: an error is one line (``labkit trace text: error: …``), and ``main`` returns 2."""

    def error(self, message: str):
        raise ValueError(f"{self.prog}: error: {message}")


def _given_book(argv: list[str]) -> str | None:
    """The ``--book PATH`` of a book command's arguments, read before they are parsed."""
    for word, following in zip(argv, [*argv[1:], None], strict=True):
        if word.startswith("--book="):
            return word.removeprefix("--book=")
        if word == "--book":
            return following
    return None


def lazy(module: str) -> ModuleType:
    """``module``, imported now: the CLI's one lazy point (a command's module, or the work of a thin ``run``)."""
    return importlib.import_module(module)


def from_book(module: str, command: str, how: str, given: str | None = None) -> ModuleType:
    """``module`` of a package of the book's clone, taken from the book's folder (``given``, else this folder or
    the nearest one above); without one, a one-line ValueError: ``labkit COMMAND`` comes with the clone, ``how``."""
    from labkit.core.fixtures import book_root, import_from_book  # numpy: not for ``labkit --help``

    package = module.partition(".")[0]
    try:
        import_from_book(package, book_root(given))
    except (FileNotFoundError, ModuleNotFoundError):
        raise ValueError(f"labkit {command} comes with the book's clone ({package}/ beside labkit): {how}") from None
    return lazy(module)


def _add(subparsers, name: str, command: Command, chosen: bool, argv: list[str]) -> None:
    """Register a command; import its module (to add its arguments) only when it is the one chosen."""
    parser = subparsers.add_parser(name, help=command.help, description=command.help)
    if not chosen:
        return
    if name in BOOK_COMMANDS:
        how = f"run it inside a clone of the book (git clone, then {command.make}), or give --book PATH"
        module = from_book(command.module, name, how, _given_book(argv))
    else:
        module = lazy(command.module)
    module.configure(parser)
    parser.set_defaults(_run=module.run)


def _add_kinds(kinds, chosen: str | None) -> None:
    """One ``labkit trace KIND`` per registered kind; only the chosen kind's options are built (every kind's for
    the help)."""
    from labkit.cli import trace
    from labkit.trace.kinds import KINDS

    for name, kind in KINDS.items():
        if chosen in (None, name):
            trace.configure(kinds.add_parser(name, help=kind.help, description=kind.help), kind)
        else:
            kinds.add_parser(name)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the chosen command's module is imported (none for ``labkit`` or ``--help``)."""
    argv = sys.argv[1:] if argv is None else argv
    words = [a for a in argv if not a.startswith("-")]  # ["trace", "text"]
    top, kind = [*words, None, None][:2]
    parser = argparse.ArgumentParser(
        prog="labkit",
        description="Inside One Generation: run the book's traces and labs (and, in its clone, its fixture recipes).",
    )
    parser.add_argument("--version", action="version", version=f"labkit {__version__}")
    parser.set_defaults(_run=lambda args: parser.print_help())  # a bare ``labkit``: the help, status 0
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    trace = commands.add_parser("trace", help=ABOUT_TRACE, description=ABOUT_TRACE)
    kinds = trace.add_subparsers(title="traces", metavar="KIND", parser_class=_Parser)
    if top == "trace" and kind not in TRACE_COMMANDS:
        _add_kinds(kinds, kind)
    for name, command in TRACE_COMMANDS.items():
        _add(kinds, name, command, top == "trace" and kind == name, argv)
    trace.set_defaults(_run=lambda args: (trace.print_help(), 2)[1])
    for name, command in {**COMMANDS, **BOOK_COMMANDS}.items():
        _add(commands, name, command, top == name, argv)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    except ValueError as exc:  # a bad argument (``_Parser.error``) or a book command outside the book: one line
        print(exc, file=sys.stderr)
        return 2
    try:
        status = int(args._run(args) or 0)
        sys.stdout.flush()  # a reader that stopped reading (``| head``) is found here, not at exit
        return status
    except BrokenPipeError:  # ``labkit check | head -c 10``: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush goes nowhere
        return 0
    except (ValueError, FileNotFoundError, argparse.ArgumentTypeError) as exc:
        print(f"labkit: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
