"""Figures and tables of a stored benchmark result (the book page draws these; nothing is re-measured).

result = benchmarks.results.load_result()      # the newest file in benchmarks/reference/
scaling_figure(result, plt)                    # per-token decode time vs context, log-log, fitted
stages_figure(result, plt)                     # the diffusion trace's time by stage
measured_on(result)                            # "measured 2026-11-29 on …" (label every figure with it)
"""

from __future__ import annotations

import numpy as np


def measured_on(result: dict) -> str:
    """A one-line label: date, machine and the load average when the run started."""
    m = result["machine"]
    return (
        f"measured {result['measured_at'][:10]} on {m['label']} ({m['cpu_model']}), "
        f"load average {m['load_average_before'][0]:.1f} at the start"
    )


def _series(stats: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    median = np.array([s["median"] for s in stats])
    low = median - np.array([s["min"] for s in stats])
    high = np.array([s["max"] for s in stats]) - median
    return median, low, high


def scaling_figure(result: dict, plt):
    """Median (bars: min–max) per-token time with the KV cache and by full recompute, with fits."""
    scaling = result["scaling"]
    if not scaling["available"]:
        raise ValueError(f"the result has no scaling measurement: {scaling['reason']}")
    contexts = np.array(scaling["contexts"], dtype=float)
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    styles = {
        "cached": ("tab:blue", "o", "decode step with KV cache"),
        "recompute": ("tab:red", "s", "full recompute (no cache)"),
    }
    for kind, key in (("cached", "cached_ms"), ("recompute", "recompute_ms")):
        colour, marker, label = styles[kind]
        median, low, high = _series(scaling[key])
        ax.errorbar(
            contexts, median, yerr=[low, high], color=colour, marker=marker, linestyle="none", capsize=3, label=label
        )
        power = scaling["fits"][kind]["power"]
        grid = np.geomspace(contexts[0], contexts[-1], 50)
        ax.plot(
            grid,
            power["coefficient"] * grid ** power["exponent"],
            color=colour,
            linestyle="--",
            linewidth=1,
            label=f"fit t ∝ T^{power['exponent']:.2f} ({scaling['fits'][kind]['growth']})",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context length T (tokens)")
    ax.set_ylabel("time to produce token T (ms)")
    ax.set_title(f"{scaling['model']}\n{measured_on(result)}", fontsize=8.5)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def stages_figure(result: dict, plt):
    """The diffusion trace's stages (median ms, bars min–max), model loading left out."""
    stages = result["diffusion_stages"]
    if not stages["available"]:
        raise ValueError(f"the result has no diffusion stage split: {stages['reason']}")
    names = [n for n in stages["stages"] if n != "load"]
    median, low, high = _series([stages["stage_ms"][n] for n in names])
    fig, ax = plt.subplots(figsize=(7.0, 3.0))
    y = np.arange(len(names))[::-1]
    ax.barh(y, median, xerr=[low, high], color="tab:purple", capsize=3)
    ax.set_yticks(y, names)
    ax.set_xlabel("ms (median of runs; bars min–max)")
    ax.set_title(
        f"trace two by stage, whole trace {stages['trace_ms']['median']:.0f} ms\n{measured_on(result)}", fontsize=8.5
    )
    return fig


# ------------------------------------------------------------------------------ tables
def _ms(stat: dict | None) -> str:
    if stat is None:
        return "—"
    return f"{stat['median']:.1f} ({stat['min']:.1f}–{stat['max']:.1f})"


def _s(stat: dict | None) -> str:
    if stat is None:
        return "—"
    return f"{stat['median']:.2f} ({stat['min']:.2f}–{stat['max']:.2f})"


def _num(value, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def summary_table_rows(result: dict) -> list[list[str]]:
    rows = []
    for r in result["summary"]:
        verdict = "" if r["meets_target"] is None else ("met" if r["meets_target"] else "missed")
        value = "not available" if r["value"] is None else f"{r['value']:.2f} {r['unit']}"
        rows.append([r["measure"], value, r["target"] or "", verdict])
    return rows


def local_exponents(contexts, times) -> list[float | None]:
    """Slope of log t between each point and the previous one (None for the first point)."""
    out: list[float | None] = [None]
    for i in range(1, len(contexts)):
        out.append(float(np.log(times[i] / times[i - 1]) / np.log(contexts[i] / contexts[i - 1])))
    return out


def scaling_table_rows(result: dict) -> list[list[str]]:
    """T, cached and recompute medians (min–max), speedup, and each curve's local exponent."""
    s = result["scaling"]
    k_cached = local_exponents(s["contexts"], [c["median"] for c in s["cached_ms"]])
    k_full = local_exponents(s["contexts"], [r["median"] for r in s["recompute_ms"]])
    return [
        [str(t), _ms(c), _num(kc), _ms(r), _num(kr), f"{x:.1f}×"]
        for t, c, kc, r, kr, x in zip(
            s["contexts"], s["cached_ms"], k_cached, s["recompute_ms"], k_full, s["speedup"], strict=True
        )
    ]


def scaling_sentence(result: dict) -> str:
    """What the longest context measured says, in one sentence."""
    s = result["scaling"]
    t, cached, full = (s["contexts"][-1], s["cached_ms"][-1]["median"], s["recompute_ms"][-1]["median"])
    return (
        f"At T = {t} the cached step took {cached:.2f} ms and the full recompute {full:.1f} ms: "
        f"{full / cached:.0f} times as long; both gave the same logits (largest gap "
        f"{s['max_abs_logit_gap']:.1e})."
    )


def fit_table_rows(result: dict) -> list[list[str]]:
    rows = []
    for kind, fit in result["scaling"]["fits"].items():
        rows.append(
            [
                kind,
                f"{fit['power']['exponent']:.2f}",
                f"{fit['power']['r2']:.3f}",
                f"{fit['linear']['slope'] * 1000:.3f}",
                f"{fit['linear']['intercept']:.3f}",
                fit["growth"],
            ]
        )
    return rows


def stage_table_rows(result: dict) -> list[list[str]]:
    s = result["diffusion_stages"]
    return [
        [n, _ms(s["stage_ms"][n]), "—" if n == "load" else f"{s['share_of_stages'][n] * 100:.1f} %"]
        for n in s["stages"]
    ]


def book_table_rows(result: dict) -> list[list[str]]:
    rows = []
    for nb in result["book"]["slowest_notebooks"]:
        cell = nb["slowest_cells"][0]
        rows.append(
            [
                nb["notebook"].removeprefix("notebooks/"),
                f"{nb['seconds']:.1f}",
                _num(nb["over_floor_seconds"], 1),
                f"cell {cell['cell']}: {cell['first_line']}",
                f"{cell['seconds']:.1f}",
            ]
        )
    return rows


def book_split_rows(result: dict) -> list[list[str]]:
    """Where the book's nbval time goes: first cells (kernel start + imports), the rest, outside cells."""
    b = result["book"]
    split = b["time_split"]
    if split is None:
        return []
    n = b["notebooks"]
    rows = [
        ["first cell of each page (kernel start, imports, setup)", f"{split['first_cells_seconds']:.1f}"],
        ["every other cell", f"{split['other_cells_seconds']:.1f}"],
        ["outside cells (pytest start, collection, kernel shutdown)", f"{split['outside_cells_seconds']:.1f}"],
        [f"the floor: {n} one-cell notebooks, all included", f"{b['floor_seconds']['median']:.1f}"],
    ]
    drawn = b.get("figures_floor_seconds")  # references before 2026-12-02 have no figures floor
    if drawn:
        label = f"the floor with the book's pyplot and trivial figures ({b['figures_ratio']:.2f} × the floor)"
        rows.append([label, f"{drawn['median']:.1f}"])
    return rows


def labs_table_rows(result: dict) -> list[list[str]]:
    labs = result["labs"]
    src = labs["source_scripts"]
    rows = [
        ["labkit labs + labkit faults", _s(labs["labkit_seconds"]), "1.00", "—"],
        [
            "benchmarks/baseline_labs.py",
            _s(labs["baseline_seconds"]),
            _num(labs["ratio"]),
            "yes" if labs["baseline_matches_labkit"] else "NO",
        ],
    ]
    if src["available"]:
        rows.append(
            [
                "the chapter's two scripts",
                _s(src["seconds"]),
                _num(src["ratio_labkit_to_source"]),
                "yes" if src["matches_labkit"] else "NO",
            ]
        )
    return rows


def per_lab_table_rows(result: dict) -> list[list[str]]:
    """Each lab alone, in process: labkit ms, baseline ms (median, min–max) and their ratio."""
    in_process = result["labs"]["in_process"]
    if in_process is None:
        return []
    return [[r["lab"], _ms3(r["labkit_ms"]), _ms3(r["baseline_ms"]), _num(r["ratio"])] for r in in_process["per_lab"]]


def _ms3(stat: dict) -> str:
    return f"{stat['median']:.3f}"


def import_table_rows(result: dict) -> list[list[str]]:
    mods = [m for m in result["imports"]["modules"] if m["available"]]
    return [
        [m["module"], f"{m['above_bare_seconds']:.2f}"] for m in sorted(mods, key=lambda m: -m["above_bare_seconds"])
    ]
