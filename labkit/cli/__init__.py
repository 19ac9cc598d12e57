"""The ``labkit`` command: each subcommand is a module with ``configure(parser)`` and ``run(args) -> int``
(or, kept in the module of a command it belongs with, ``configure_<name>`` and ``run_<name>``: ``HOMES``).

A new command is its module plus one line in ``TRACE_COMMANDS``, ``KIND_COMMANDS`` or ``TOP_COMMANDS``;
``labkit trace KIND`` has one subcommand per registered trace kind (``labkit.trace.kinds``).
A class's tools (the class copy, grading hand-ins) are not here: ``python -m classroom`` (a sibling package).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: ``labkit trace COMMAND`` beside the kinds: command → help
TRACE_COMMANDS = {"diff": "first divergence between two traces"}
#: ``labkit trace KIND COMMAND``: (kind, command) → help
KIND_COMMANDS: dict[tuple[str, str], str] = {}

#: ``labkit COMMAND``: command → help
TOP_COMMANDS = {
    "labs": "run the eight mechanism labs of chapter 11 and write their JSON report",
    "faults": "run the fault-injection supplement and write its JSON report",
    "fixtures": "build the fixtures, or check them against their recipes",
    "check": "list the exercises, or check a solution file against one",
    "lab": "open the book in JupyterLab at its first page (what `make lab` does)",
    "reset": "bring a page, or every page, back to the book's original (your edits set aside)",
}
#: a command kept in the module of the command it belongs with: command → that module
HOMES = {"diff": "trace", "faults": "labs", "reset": "lab"}


class _Parser(argparse.ArgumentParser):
    """The parser of the trace commands: an error is one line (``labkit trace text: error: …``)
    and ``main`` returns 2 — nothing has run yet."""

    def error(self, message: str):
        raise ValueError(f"{self.prog}: error: {message}")


def _add(subparsers, name: str, help_text: str, load: bool) -> None:
    """Register a command; import its module (to add its arguments) only when ``load``."""
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    if load:
        target = importlib.import_module(f"labkit.cli.{HOMES.get(name, name.replace('-', ''))}")
        suffix = f"_{name}" if name in HOMES else ""
        getattr(target, f"configure{suffix}")(parser)
        parser.set_defaults(_run=getattr(target, f"run{suffix}"))


def _add_kinds(kinds, chosen: str | None) -> None:
    """One ``labkit trace KIND`` per registered kind, and the kinds' own commands.  Only the
    chosen kind is imported (every kind when none is chosen, for the help)."""
    from labkit.cli import trace
    from labkit.trace.kinds import KINDS

    for name in KINDS:
        if chosen not in (None, name):
            kinds.add_parser(name)
            continue
        kind = KINDS[name]
        parser = kinds.add_parser(name, help=kind.help, description=kind.help)
        trace.configure(parser, kind)
        extra = {command: entry for (owner, command), entry in KIND_COMMANDS.items() if owner == name}
        if extra:
            more = parser.add_subparsers(title="more", metavar="COMMAND", required=False)
            for command, help_text in extra.items():
                _add(more, command, help_text, load=True)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser.  Only the chosen command's module is imported (every module
    for a bare ``labkit`` or ``--help``), so one command never pays for the others."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]  # ["trace", "text"]
    top, kind = [*words, None, None][:2]
    parser = argparse.ArgumentParser(
        prog="labkit", description="Inside One Generation: run the book's traces, labs and fixture recipes."
    )
    from labkit import __version__

    parser.add_argument("--version", action="version", version=f"labkit {__version__}")
    parser.set_defaults(_run=lambda args: parser.print_help())  # a bare ``labkit``: the help, status 0
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    about = "run or compare the execution traces of chapter 7"
    trace = commands.add_parser("trace", help=about, description=about)
    kinds = trace.add_subparsers(title="traces", metavar="KIND", parser_class=_Parser)
    if top in (None, "trace") and kind not in TRACE_COMMANDS:
        _add_kinds(kinds, kind)
    for name, help_text in TRACE_COMMANDS.items():
        _add(kinds, name, help_text, top in (None, "trace") and kind in (None, name))
    trace.set_defaults(_run=lambda args: (trace.print_help(), 2)[1])
    for name, help_text in TOP_COMMANDS.items():
        _add(commands, name, help_text, load=top in (None, name))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except ValueError as exc:  # a bad argument (``_Parser.error``): one line, nothing ran
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
