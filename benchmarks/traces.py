"""The three traces of chapter 7, run through their public CLI (``labkit trace KIND --out PATH``).

Wall time from launch to exit of one process per run (Python start, imports, the trace,
writing its JSONL), interleaved over the three kinds.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from benchmarks.labs_vs_baseline import labkit_command
from benchmarks.stats import CommandFailed, interleaved, run_command
from labkit.trace.kinds import KINDS  # iterated for the names only: no kind is imported here


def trace_runs(repeats: int = 3) -> dict:
    """{"available", "reason", "kinds": {kind: {"available", "reason", "wall_seconds", "events"}}}."""
    kinds = {
        kind: {"available": False, "reason": "did not run", "wall_seconds": None, "events": None} for kind in KINDS
    }
    scratch = Path(tempfile.mkdtemp(prefix="iog-bench-traces-"))
    try:
        runners = {}
        for kind in KINDS:
            out = scratch / f"{kind}.jsonl"
            argv = [*labkit_command(), "trace", kind, "--out", str(out)]
            runners[kind] = lambda a=argv: run_command(a, cwd=scratch)
        for kind in list(runners):  # one untimed run: is it working at all?
            try:
                runners[kind]()
            except CommandFailed as exc:
                kinds[kind]["reason"] = str(exc)
                del runners[kind]
        stats = interleaved(runners, repeats) if runners else {}
        for kind, summary in stats.items():
            lines = (scratch / f"{kind}.jsonl").read_text(encoding="utf-8").splitlines()
            kinds[kind].update(
                available=True, reason=None, wall_seconds=summary, events=sum(1 for line in lines if line.strip())
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"available": bool(stats), "reason": None if stats else "no trace ran", "kinds": kinds}
