"""Labs vs a straightforward script: ``labkit labs`` + ``labkit faults`` against
``benchmarks/baseline_labs.py`` (and, for the record, the source chapter's own two scripts).

Each contender is two processes (the labs report, then the fault supplement), timed from
launch to exit, interleaved round by round. Ratio = labkit / baseline (target ≤ 1.0).
The in-process compute alone (reports built in this process, imports excluded) is timed
the same way, so start-up and arithmetic can be told apart.

Every contender's reports are compared with labkit's (``benchmarks.compare.report_gaps``,
rtol = atol = 1e-9): a timing only counts if the contender did the same work.

The source scripts are cut out of the chapter text into a temporary folder outside the
repository, run from there, and deleted; they are never stored in the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.compare import report_gaps
from benchmarks.stats import CommandFailed, interleaved, ratio, run_command, scaled, time_call

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "benchmarks" / "baseline_labs.py"
SOURCE_DIR = Path(os.environ.get("IOG_SOURCE_DIR", "/work/shared/source"))
SOURCE_CHAPTER = "001_c3871fa65bf8cf78.txt"
#: The first line of each of the chapter's two scripts (their module docstrings) and their file names.
SOURCE_SCRIPTS = (
    ('"""Deterministic NumPy mechanism labs', "mechanism_labs.py"),
    ('"""Supplemental mechanism checks', "fault_injection.py"),
)
TARGET_RATIO = 1.0
SAMPLES = 200_000


def labkit_command() -> list[str]:
    """The ``labkit`` console script of this environment (or ``python -m labkit``)."""
    script = Path(sys.executable).with_name("labkit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "labkit"]


def extract_source_scripts(chapter: Path, dest: Path) -> dict[str, Path]:
    """Cut the chapter's two scripts into ``dest``; {file name: path}.

    The chapter text holds them back to back after its title line; each begins with its
    module docstring. Raises ValueError when a start marker is missing or a script does not compile.
    """
    lines = chapter.read_text(encoding="utf-8").splitlines()
    starts = []
    for marker, name in SOURCE_SCRIPTS:
        hits = [i for i, line in enumerate(lines) if line.startswith(marker)]
        if len(hits) != 1:
            raise ValueError(f"expected exactly one line starting with {marker!r} in {chapter.name}, found {len(hits)}")
        starts.append((hits[0], name))
    starts.sort()
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for k, (begin, name) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        text = "\n".join(lines[begin:end]).rstrip() + "\n"
        compile(text, name, "exec")  # SyntaxError → not available
        path = dest / name
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


def _pair(first: list[str], second: list[str], cwd: Path):
    def run() -> float:
        return run_command(first, cwd=cwd) + run_command(second, cwd=cwd)

    return run


def _gaps(outputs: dict[str, Path], reference: dict[str, Path]) -> list[str]:
    gaps = []
    for key in ("labs", "faults"):
        gaps += report_gaps(
            json.loads(outputs[key].read_text(encoding="utf-8")),
            json.loads(reference[key].read_text(encoding="utf-8")),
            path=key,
        )
    return gaps


#: labkit report key → the baseline script's function doing that lab
BASELINE_FUNCTIONS = {
    "ce_gradient": "ce_check",
    "masks": "mask_checks",
    "causal_attention": "attention_checks",
    "cache_equivalence": "cache_check",
    "dpo": "dpo_check",
    "grpo": "grpo_check",
    "kl": "kl_check",
    "speculative_sampling": "speculative_check",
    "bandwidth_budget": "bandwidth",
    "unequal_rank_gradients": "unequal_ranks",
    "cache_faults": "cache_fault_cases",
    "wrong_rejection_fallback": "wrong_fallback",
}


def _load_baseline():
    import importlib.util

    spec = importlib.util.spec_from_file_location("baseline_labs", BASELINE)
    baseline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baseline)
    return baseline


def per_lab(repeats: int) -> list[dict]:
    """Each lab alone, in this process: labkit's ``run()`` vs the baseline's function (ms)."""
    from labkit.labs.report import FAULTS, LABS

    baseline = _load_baseline()
    rows = []
    for key, lab in (*LABS, *FAULTS):
        plain = getattr(baseline, BASELINE_FUNCTIONS[key])
        if key == "speculative_sampling":
            contenders = {
                "labkit": lambda lab=lab: lab(samples=SAMPLES),
                "baseline": lambda plain=plain: plain(SAMPLES),
            }
        else:
            contenders = {"labkit": lab, "baseline": plain}
        timed = {
            name: (lambda fn=fn: time_call(fn, repeats=1, warmup=0)[0]["median"]) for name, fn in contenders.items()
        }
        for fn in timed.values():
            fn()  # warm-up
        stats = interleaved(timed, repeats)
        rows.append(
            {
                "lab": key,
                "labkit_ms": scaled(stats["labkit"], 1000.0),
                "baseline_ms": scaled(stats["baseline"], 1000.0),
                "ratio": ratio(stats["labkit"], stats["baseline"]),
            }
        )
    return rows


def in_process_compute(repeats: int) -> dict:
    """Seconds to build both reports inside this process: labkit vs the baseline's functions."""
    from labkit.labs.report import faults_report, labs_report

    baseline = _load_baseline()

    def labkit_once() -> float:
        return time_call(lambda: (labs_report(SAMPLES), faults_report()), repeats=1, warmup=0)[0]["median"]

    def baseline_once() -> float:
        return time_call(lambda: (baseline.labs_report(SAMPLES), baseline.faults_report()), repeats=1, warmup=0)[0][
            "median"
        ]

    labkit_once(), baseline_once()  # warm-up: imports, caches
    stats = interleaved({"labkit": labkit_once, "baseline": baseline_once}, repeats)
    return {
        "labkit_seconds": stats["labkit"],
        "baseline_seconds": stats["baseline"],
        "ratio": ratio(stats["labkit"], stats["baseline"]),
        "per_lab": per_lab(repeats),
    }


def unavailable(reason: str) -> dict:
    return {
        "available": False,
        "reason": reason,
        "samples": SAMPLES,
        "labkit_seconds": None,
        "baseline_seconds": None,
        "ratio": None,
        "target_ratio": TARGET_RATIO,
        "meets_target": None,
        "baseline_matches_labkit": None,
        "baseline_gaps": [],
        "in_process": None,
        "source_scripts": {
            "available": False,
            "reason": reason,
            "seconds": None,
            "ratio_labkit_to_source": None,
            "matches_labkit": None,
            "gaps": [],
        },
    }


def labs_vs_baseline(repeats: int = 5, source_dir: Path = SOURCE_DIR) -> dict:
    """Wall time of the two labkit commands vs the baseline (and the source scripts), interleaved."""
    scratch = Path(tempfile.mkdtemp(prefix="iog-bench-labs-"))  # outside the repository
    try:
        out = {
            who: {key: scratch / f"{who}-{key}.json" for key in ("labs", "faults")}
            for who in ("labkit", "baseline", "source")
        }
        lk = labkit_command()
        contenders = {
            "labkit": _pair(
                [*lk, "labs", "--output", str(out["labkit"]["labs"]), "--samples", str(SAMPLES)],
                [*lk, "faults", "--output", str(out["labkit"]["faults"])],
                REPO,
            ),
            "baseline": _pair(
                [
                    sys.executable,
                    str(BASELINE),
                    "labs",
                    "--output",
                    str(out["baseline"]["labs"]),
                    "--samples",
                    str(SAMPLES),
                ],
                [sys.executable, str(BASELINE), "faults", "--output", str(out["baseline"]["faults"])],
                REPO,
            ),
        }
        source = {
            "available": False,
            "reason": None,
            "seconds": None,
            "ratio_labkit_to_source": None,
            "matches_labkit": None,
            "gaps": [],
        }
        chapter = source_dir / SOURCE_CHAPTER
        try:
            scripts = extract_source_scripts(chapter, scratch / "source")
            contenders["source"] = _pair(
                [
                    sys.executable,
                    str(scripts["mechanism_labs.py"]),
                    "--output",
                    str(out["source"]["labs"]),
                    "--samples",
                    str(SAMPLES),
                ],
                [sys.executable, str(scripts["fault_injection.py"]), "--output", str(out["source"]["faults"])],
                scratch / "source",
            )
        except (OSError, ValueError, SyntaxError) as exc:
            source["reason"] = f"source scripts not available: {exc}"
        try:
            stats = interleaved(contenders, repeats)
        except CommandFailed as exc:
            return unavailable(str(exc))
        base_gaps = _gaps(out["baseline"], out["labkit"])
        if "source" in stats:
            src_gaps = _gaps(out["source"], out["labkit"])
            source.update(
                available=True,
                seconds=stats["source"],
                ratio_labkit_to_source=ratio(stats["labkit"], stats["source"]),
                matches_labkit=not src_gaps,
                gaps=src_gaps[:10],
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    labs_ratio = ratio(stats["labkit"], stats["baseline"])
    return {
        "available": True,
        "reason": None,
        "samples": SAMPLES,
        "labkit_seconds": stats["labkit"],
        "baseline_seconds": stats["baseline"],
        "ratio": labs_ratio,
        "target_ratio": TARGET_RATIO,
        "meets_target": labs_ratio is not None and labs_ratio <= TARGET_RATIO,
        "baseline_matches_labkit": not base_gaps,
        "baseline_gaps": base_gaps[:10],
        "in_process": in_process_compute(repeats),
        "source_scripts": source,
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(labs_vs_baseline(repeats=3), indent=2))
