"""Player latency in a real browser: from a reader's click to the new picture, per player.

Each player module is loaded in Chromium from a page served on 127.0.0.1 exactly as the
static book's ``{anywidget}`` directive loads it (``tests/browser/player_harness.py``), and
its stepping control is moved ``STEPS`` times.  Per change two times are taken in the page:
``work_ms`` from the event to the new picture laid out (handler, DOM update, style, layout)
and ``frame_ms`` to the next animation frame (when it is painted).  Target: the median
``work_ms`` ≤ 16 ms, one frame.  The JupyterLab numbers (target ≤ 50 ms) are taken by
``scripts/browser-test.sh`` (it starts JupyterLab) and read here from
``build/browser/player-times.json`` when that file exists.

    python benchmarks/players.py              # table; benchmarks/results/players-latest.json
    python benchmarks/players.py --reference  # also benchmarks/reference/players/<date>-<machine>.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BROWSER_TESTS = REPO / "tests" / "browser"
LAB_TIMES = REPO / "build" / "browser" / "player-times.json"
REFERENCE_DIR = HERE / "reference" / "players"
LATEST_PATH = HERE / "results" / "players-latest.json"
HARNESS_TARGET_MS, LAB_TARGET_MS = 16.0, 50.0
STEPS = 20


def measure_harness(steps: int = STEPS) -> dict:
    """Every embedded player, stepped ``steps`` times in Chromium (no Jupyter)."""
    sys.path.insert(0, str(BROWSER_TESTS))
    try:
        from browser_lab import CHROMIUM, CHROMIUM_ARGS
        from player_controls import embed_key, operate, step_controls, step_times
        from player_harness import HarnessServer, embeds
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        return {"available": False, "reason": f"needs Playwright (pip install -e '.[browser]'): {exc}", "players": []}
    if not Path(CHROMIUM).exists():
        return {"available": False, "reason": f"no Chromium at {CHROMIUM}", "players": []}
    rows = []
    with HarnessServer() as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for page_md, name in embeds():
                key = embed_key(page_md, name)
                page = browser.new_page()
                page.goto(server.url(page_md, name))
                page.wait_for_function("() => window.playerReady || window.playerError", timeout=30_000)
                control, back = step_controls(page)
                operate(page, control)  # the first draw of each path
                measured = step_times(page, control, back, repeats=steps)
                rows.append({"player": key, "page": page_md, "control": control, **measured})
                page.close()
        finally:
            browser.close()
    return {"available": True, "target_ms": HARNESS_TARGET_MS, "players": rows}


def lab_times(path: Path = LAB_TIMES) -> dict:
    """The JupyterLab step times the browser suite last wrote (None when it has not run)."""
    if not path.exists():
        return {"available": False, "reason": "run scripts/browser-test.sh first", "players": []}
    found = json.loads(path.read_text(encoding="utf-8"))
    rows = [
        {"player": key.removeprefix("lab/"), **value} for key, value in sorted(found.items()) if key.startswith("lab/")
    ]
    return {"available": bool(rows), "target_ms": LAB_TARGET_MS, "players": rows}


def measure(steps: int = STEPS) -> dict:
    started = time.perf_counter()
    harness = measure_harness(steps)
    return {
        "kind": "labkit player latency",
        "measured_at": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"system": platform.system(), "machine": platform.machine(), "cores": __import__("os").cpu_count()},
        "steps": steps,
        "harness": harness,
        "jupyterlab": lab_times(),
        "duration_seconds": round(time.perf_counter() - started, 1),
    }


def load_reference(folder: Path = REFERENCE_DIR) -> dict:
    """The newest stored player result (the measuring page reads this, never re-measures)."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no player reference in {folder}; run benchmarks/players.py --reference")
    return json.loads(files[-1].read_text(encoding="utf-8"))


def table_rows(result: dict) -> list[list[str]]:
    """One row per player: where, control, median work / frame ms, within target."""
    rows = []
    for host, section in (("harness", result["harness"]), ("JupyterLab", result["jupyterlab"])):
        for r in section["players"]:
            ok = "yes" if r["work_ms"] <= section["target_ms"] else "no"
            rows.append(
                [
                    r["player"],
                    host,
                    r["control"],
                    f"{r['work_ms']:.1f}",
                    f"{r['frame_ms']:.1f}",
                    f"≤ {section['target_ms']:g} ms: {ok}",
                ]
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/players.py", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--reference", action="store_true", help="also store under benchmarks/reference/players/")
    args = parser.parse_args(argv)
    result = measure(args.steps)
    LATEST_PATH.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    LATEST_PATH.write_text(text, encoding="utf-8")
    if args.reference:
        REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
        name = f"{result['measured_at']}-{result['machine']['cores']}core-{result['machine']['machine']}.json"
        (REFERENCE_DIR / name).write_text(text, encoding="utf-8")
    if not result["harness"]["available"]:
        print(f"players: harness unavailable: {result['harness']['reason']}")
    for row in table_rows(result):
        print("  ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
