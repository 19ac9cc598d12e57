"""Measure the book: one command, a table on stdout, a JSON result on disk.

    python benchmarks/run.py                      # everything (~3–5 min on 2 cores)
    python benchmarks/run.py --quick              # one repetition each, short contexts
    python benchmarks/run.py --only labs,scaling  # some sections; the others say "not selected"
    python benchmarks/run.py --reference          # also store it in benchmarks/reference/

The result goes to ``benchmarks/results/latest.json`` (git-ignored) unless ``--output`` says
otherwise; its shape is ``benchmarks/result.schema.json``. Exit status 0 when the run
completed (missed targets are findings, not failures), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/run.py`: benchmarks/ runs from the clone, not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import results  # noqa: E402

SECTIONS = ("book", "labs", "scaling", "diffusion_stages", "traces", "imports", "torture")
#: repetitions per section: (full run, --quick)
REPEATS = {
    "book": (2, 1),
    "labs": (5, 1),
    "scaling": (5, 1),
    "diffusion_stages": (3, 1),
    "traces": (3, 1),
    "imports": (3, 1),
    "torture": (1, 1),
}
QUICK_CONTEXTS = (16, 64, 256)


def _sections(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(SECTIONS)}, got {text!r}")
    return names


def _contexts(text: str) -> list[int]:
    from benchmarks.scaling import check_contexts

    try:
        return check_contexts([int(s) for s in text.split(",")])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated context lengths ≥ 2, e.g. 16,64,256: {exc}"
        ) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition per section, short contexts")
    parser.add_argument(
        "--only",
        type=_sections,
        default=list(SECTIONS),
        metavar="LIST",
        help=f"sections to run (default all): {','.join(SECTIONS)}",
    )
    parser.add_argument(
        "--repeats",
        type=_positive,
        default=None,
        metavar="N",
        help="repetitions for every selected section (default: per section)",
    )
    parser.add_argument(
        "--contexts",
        type=_contexts,
        default=None,
        metavar="LIST",
        help="context lengths of the scaling section (default 16,…,2048)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=results.LATEST_PATH,
        metavar="PATH",
        help="where to write the JSON result (default: benchmarks/results/latest.json)",
    )
    parser.add_argument(
        "--reference", action="store_true", help="also store the result as benchmarks/reference/<date>-<machine>.json"
    )
    return parser


def _not_selected(section: str) -> dict:
    from benchmarks import book, diffusion_stages, labs_vs_baseline, scaling

    reason = "not selected in this run"
    if section == "book":
        return book.unavailable(reason)
    if section == "labs":
        return labs_vs_baseline.unavailable(reason)
    if section == "scaling":
        return scaling.unavailable(reason)
    if section == "diffusion_stages":
        return diffusion_stages.unavailable(reason)
    if section == "traces":
        from benchmarks.traces import KINDS

        return {
            "available": False,
            "reason": reason,
            "kinds": {k: {"available": False, "reason": reason, "wall_seconds": None, "events": None} for k in KINDS},
        }
    if section == "imports":
        from benchmarks.imports import labels

        return {
            "available": False,
            "reason": reason,
            "bare_python_seconds": None,
            "modules": [
                {"module": m, "available": False, "seconds": None, "above_bare_seconds": None} for m in labels()
            ],
        }
    if section == "torture":
        from benchmarks.torture import unavailable

        return unavailable(reason)
    raise ValueError(f"unknown section {section!r}")


#: section → "module:function" for the sections that take only the repetitions
RUNNERS = {
    "book": "benchmarks.book:book_reexecution",
    "labs": "benchmarks.labs_vs_baseline:labs_vs_baseline",
    "diffusion_stages": "benchmarks.diffusion_stages:diffusion_stages",
    "traces": "benchmarks.traces:trace_runs",
    "imports": "benchmarks.imports:import_costs",
}


def run_section(section: str, repeats: int, contexts, quick: bool = False) -> dict:
    import importlib

    if section == "scaling":
        from benchmarks.scaling import decoder_scaling

        return decoder_scaling(contexts, repeats)
    if section == "torture":  # one run: its figures are counts, its time is one wall time
        from benchmarks.torture import FULL, QUICK, torture_run

        return torture_run(**(QUICK if quick else FULL))
    if section not in RUNNERS:
        raise ValueError(f"unknown section {section!r}")
    module, function = RUNNERS[section].split(":")
    return getattr(importlib.import_module(module), function)(repeats)


def measure(
    sections=SECTIONS, *, quick: bool = False, repeats: int | None = None, contexts=None, progress=None
) -> dict:
    """Run the selected sections and return the validated result object."""
    from benchmarks.scaling import DEFAULT_CONTEXTS

    contexts = list(contexts or (QUICK_CONTEXTS if quick else DEFAULT_CONTEXTS))
    chosen = {s: (repeats or REPEATS[s][1 if quick else 0]) for s in SECTIONS if s in sections}
    load_before = results.load_average()
    started = time.perf_counter()
    measured_at = results.now_utc()
    out = {}
    for section in SECTIONS:
        if section not in chosen:
            out[section] = _not_selected(section)
            continue
        t = time.perf_counter()
        out[section] = run_section(section, chosen[section], contexts, quick)
        if progress:
            progress(f"{section}: {time.perf_counter() - t:.1f} s")
    result = {
        "kind": "iog-benchmarks",
        "schema_version": results.SCHEMA_VERSION,
        "measured_at": measured_at,
        "machine": results.machine_info(load_before),
        "code": results.code_state(),
        "settings": {"quick": quick, "sections": list(chosen), "repeats": chosen, "contexts": contexts},
        "duration_seconds": time.perf_counter() - started,
        **out,
        "summary": [],
    }
    result["summary"] = results.summary_rows(result)
    results.validate(result)
    return result


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    # Measure as an installed package runs: with bytecode caches (pip compiles them; an editable
    # install writes them on first import). An environment that forbids them (PYTHONDONTWRITEBYTECODE)
    # would make every timed process compile labkit again, a cost no reader pays: there they go
    # under build/pycache, as `make` puts them.
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(__file__).resolve().parents[1] / "build" / "pycache"))
    result = measure(
        args.only,
        quick=args.quick,
        repeats=args.repeats,
        contexts=args.contexts,
        progress=lambda line: print(f"  … {line}", file=sys.stderr, flush=True),
    )
    print(results.format_table(result))
    path = results.write_result(result, args.output)
    print(f"\nResult: {path}")
    if args.reference:
        ref = results.write_result(result, results.REFERENCE_DIR / results.reference_name(result))
        print(f"Reference: {ref}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
