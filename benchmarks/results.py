"""The result of one benchmark run: machine, sections, summary rows; its JSON shape and table.

The shape is fixed by ``benchmarks/result.schema.json`` (``validate``): every section is
always present, and one that could not run says ``available: false`` and why. A later run
can therefore be compared key by key with a stored reference (``benchmarks/reference/``).
"""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE / "result.schema.json"
REFERENCE_DIR = HERE / "reference"
LATEST_PATH = HERE / "results" / "latest.json"
SCHEMA_VERSION = 1


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown" elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return [0.0, 0.0, 0.0]


def machine_info(load_before: list[float] | None = None) -> dict:
    import numpy as np

    cpus = os.cpu_count()
    return {
        "label": f"{cpus}-core {platform.machine()} {platform.system()}",
        "cpus": cpus,
        "cpu_model": cpu_model(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "load_average_before": load_before if load_before is not None else load_average(),
        "load_average_after": load_average(),
    }


def code_state(repo: Path = HERE.parent) -> dict:
    """The commit measured and whether the working tree had uncommitted changes (None: no git)."""
    import subprocess

    def git(*args) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "uncommitted_changes": None if status is None else bool(status)}


def now_utc() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# ------------------------------------------------------------------------------ summary
def _row(measure: str, value, unit: str, target: str | None = None, meets: bool | None = None) -> dict:
    return {
        "measure": measure,
        "value": None if value is None else float(value),
        "unit": unit,
        "target": target,
        "meets_target": meets,
    }


def summary_rows(result: dict) -> list[dict]:
    """One row per headline figure (medians and ratios), in the order the table prints them."""
    rows = []
    book = result["book"]
    rows.append(
        _row("book: nbval wall time / floor", book["ratio"], "×", f"≤ {book['target_ratio']:g}", book["meets_target"])
    )
    rows.append(
        _row(
            f"book: nbval wall time ({book['notebooks']} notebooks)",
            book["wall_seconds"] and book["wall_seconds"]["median"],
            "s",
        )
    )
    rows.append(
        _row(
            "book: floor (same number of one-cell notebooks)",
            book["floor_seconds"] and book["floor_seconds"]["median"],
            "s",
        )
    )
    if "figures_ratio" in book:  # references before 2026-12-02 have no figures floor
        rows.append(_row("book: floor with the book's figures / floor", book["figures_ratio"], "×"))
    labs = result["labs"]
    rows.append(
        _row(
            "labs+faults: labkit / baseline script",
            labs["ratio"],
            "×",
            f"≤ {labs['target_ratio']:g}",
            labs["meets_target"],
        )
    )
    rows.append(
        _row(
            "labs+faults: labkit / baseline, in-process compute",
            labs["in_process"] and labs["in_process"]["ratio"],
            "×",
        )
    )
    rows.append(
        _row("labs+faults: labkit / source chapter's scripts", labs["source_scripts"]["ratio_labkit_to_source"], "×")
    )
    scaling = result["scaling"]
    if scaling["available"]:
        t = scaling["contexts"][-1]
        rows.append(_row(f"decode step with KV cache, T={t}", scaling["cached_ms"][-1]["median"], "ms"))
        rows.append(_row(f"full recompute, T={t}", scaling["recompute_ms"][-1]["median"], "ms"))
        for kind in ("cached", "recompute"):
            fit = scaling["fits"][kind]
            rows.append(_row(f"growth exponent k, {kind} ({fit['growth']})", fit["power"]["exponent"], "k"))
    else:
        rows.append(_row("decode step with KV cache", None, "ms"))
    stages = result["diffusion_stages"]
    rows.append(_row("diffusion trace in-process", stages["trace_ms"] and stages["trace_ms"]["median"], "ms"))
    if stages["available"]:
        top = max(stages["share_of_stages"], key=stages["share_of_stages"].get)
        rows.append(_row(f"diffusion: largest stage ({top}) share", stages["share_of_stages"][top], "fraction"))
    for kind, info in result["traces"]["kinds"].items():
        rows.append(
            _row(
                f"labkit trace {kind} (process wall time)", info["wall_seconds"] and info["wall_seconds"]["median"], "s"
            )
        )
    torture = result.get("torture")
    if torture is not None:
        rows.append(
            _row(
                f"torture: violations in {torture['kills'] or 0} kills + {torture['races'] or 0} races",
                torture["violations"],
                "count",
                "= 0",
                None if torture["violations"] is None else torture["violations"] == 0,
            )
        )
        rows.append(_row("torture: wall time of that run", torture["wall_seconds"], "s"))
    imports = [m for m in result["imports"]["modules"] if m["available"]]
    for module in sorted(imports, key=lambda m: -m["above_bare_seconds"])[:3]:
        rows.append(_row(f"import {module['module']} (above bare python)", module["above_bare_seconds"], "s"))
    return rows


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "not available"
    if unit == "count":
        return f"{value:.0f}"
    if unit in ("×", "k", "fraction"):
        return f"{value:.2f}"
    if unit == "ms":
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    return f"{value:.2f}"


def format_table(result: dict) -> str:
    """The summary as a fixed-width text table (what ``run.py`` prints)."""
    head = ("measure", "median", "unit", "target", "")
    lines = [
        (
            r["measure"],
            _fmt(r["value"], r["unit"]),
            r["unit"],
            r["target"] or "",
            "" if r["meets_target"] is None else ("ok" if r["meets_target"] else "MISSED"),
        )
        for r in result["summary"]
    ]
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head))]

    def fmt(row):
        return "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    machine = result["machine"]
    title = (
        f"Inside One Generation benchmarks — {result['measured_at']} on {machine['label']} "
        f"({machine['cpu_model']}), load {machine['load_average_before'][0]:.1f}"
    )
    return "\n".join([title, fmt(head), fmt(["-" * w for w in widths]), *map(fmt, lines)])


# ---------------------------------------------------------------------------- the file
def validate(result: dict) -> None:
    """Raise ``ValueError`` naming the first place where ``result`` breaks the schema."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(result), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(map(str, first.path)) or "(top level)"
        raise ValueError(
            f"benchmark result breaks result.schema.json at {where}: {first.message}"
            + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        )


def write_result(result: dict, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def reference_files(folder: Path = REFERENCE_DIR) -> list[Path]:
    return sorted(folder.glob("*.json"))


def load_result(path: Path | None = None) -> dict:
    """A stored result (default: the newest file in ``benchmarks/reference/``)."""
    if path is None:
        files = reference_files()
        if not files:
            raise FileNotFoundError(f"no reference result in {REFERENCE_DIR}; run benchmarks/run.py --reference")
        path = files[-1]
    return json.loads(Path(path).read_text(encoding="utf-8"))


def reference_name(result: dict) -> str:
    """``<date>-<cpus>core-<arch>.json``: when and on what a reference was measured."""
    m = result["machine"]
    date = result["measured_at"][:10]
    arch = platform.machine() or "unknown"
    return f"{date}-{m['cpus']}core-{arch}.json"
