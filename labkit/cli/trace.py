"""``labkit trace KIND [--fault NAME] [--out PATH] …``: run any kind of ``labkit.trace.kinds`` (correct, or with a
named fault), write its JSONL trace and print its summary.  Paths and names are checked while the arguments are
parsed, before any work: a bad one ends with exit status 2 and one line saying what was expected.
"""

import argparse
import tempfile
import time
from pathlib import Path


def _writable(folder: Path, what: str) -> None:
    """Make ``folder`` (and its parents) and prove a file can be written in it, or say why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write {what} in {str(folder)!r}: {exc.strerror or exc}") from None


def output_file(text: str) -> Path:
    """An argparse type: a file to (over)write — not a folder, a FIFO, a device or a link loop, with a
    name the file system takes, in a place that can be written — checked before any work is done."""
    path = Path(text)
    try:
        folder, exists, regular = path.is_dir(), path.exists(), path.is_file()
        path.resolve()  # a link that points back at itself raises here
    except (OSError, RuntimeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise argparse.ArgumentTypeError(f"cannot write the file {text[:80]!r}: {why}") from None
    if not text or folder:
        raise argparse.ArgumentTypeError(f"expected a file to write, got {'a folder' if text else 'nothing'} {text!r}")
    if exists and not regular:  # /dev/full, a FIFO nobody reads, a socket
        raise argparse.ArgumentTypeError(f"expected a regular file to write, got {text!r} (a device, FIFO or socket)")
    _writable(path.parent, f"the file {path.name!r}")
    return path


def output_dir(text: str) -> Path:
    """An argparse type: a folder to keep files in — an existing folder or one that can be made."""
    path = Path(text)
    if not text or (path.exists() and not path.is_dir()):
        raise argparse.ArgumentTypeError(f"expected a folder, got {'a file' if text else 'nothing'} {text!r}")
    _writable(path, "files")
    return path


def _named(kind, what: str, names: list[str]):
    """An argparse type: one of ``names`` (a fault or scenario of ``kind``), or an error listing them."""

    def check(name: str) -> str:
        if name not in names:
            raise argparse.ArgumentTypeError(f"unknown {kind.name} {what} {name!r}: {what} must be one of {names}")
        return name

    return check


def configure(parser, kind) -> None:
    """Options of ``labkit trace KIND`` for the ``TraceKind`` ``kind``."""
    names = list(kind.faults)
    default = f"default: {kind.config().trace_id}[-FAULT].jsonl" if kind.writes_by_default else "default: none"
    parser.add_argument("--out", metavar="PATH", type=output_file, help=f"write the JSONL trace to PATH ({default})")
    for option, (help_text, _) in kind.outputs.items():
        parser.add_argument(f"--{option}", metavar="PATH", type=output_file, help=help_text)
    fault_help = "inject a named fault: " + ", ".join(names)
    parser.add_argument("--fault", metavar="NAME", type=_named(kind, "fault", names), help=fault_help)
    if kind.baseline:
        scenarios = [kind.baseline[0], *names]
        scenario_help = f"run a named scenario: {kind.baseline[0]} (the correct run) or any fault"
        parser.add_argument("--scenario", metavar="NAME", type=_named(kind, "scenario", scenarios), help=scenario_help)
    parser.add_argument("--list-faults", action="store_true", help="list the named faults and exit")
    parser.set_defaults(_run=lambda args: run(args, kind))


def run(args, kind) -> int:
    from labkit.core.events import write_jsonl
    from labkit.trace.kinds import run_kind

    if args.list_faults:  # two lines a fault: what goes wrong, where it first shows
        lines = [f"{kind.baseline[0]:28s} {kind.baseline[1]}"] if kind.baseline else []
        for item in kind.faults.values():
            lines += [f"{item.name:28s} {item.description}", f"{'':28s} first divergence {item.expected}"]
        print("\n".join(lines))
        return 0
    scenario = getattr(args, "scenario", None)  # the correct run, or a fault by another name
    if scenario and args.fault and scenario != args.fault:
        raise ValueError(f"give --scenario or --fault, not both ({scenario!r} vs {args.fault!r})")
    fault = args.fault or scenario
    fault = None if kind.baseline and fault == kind.baseline[0] else fault
    config = kind.faulty_config(fault)
    out = args.out
    if out is None and kind.writes_by_default:  # checked now, not after the run
        out = output_file(f"{config.trace_id}{f'-{fault}' if fault else ''}.jsonl")
    start = time.perf_counter()
    result = run_kind(kind.name, fault)
    seconds = time.perf_counter() - start
    print("\n".join(kind.summary(result, fault)))
    written = [write_jsonl(result.events, out)] if out else []
    written += [write(result, getattr(args, o)) for o, (_, write) in kind.outputs.items() if getattr(args, o)]
    print("\n".join([*(f"wrote      {path}" for path in written), f"took       {seconds:.2f} s"]))
    return 0
