"""Maintain the players' ES modules and the data the static book embeds.

``sync``   paste ``labkit/reader/players/_shared.mjs`` into every player module between
           its ``// ---- shared: begin/end ----`` markers (MyST copies one module file per
           ``{anywidget}``, so a player cannot import a sibling; this is the one generated step);
``pages``  write each page's ``{anywidget}`` JSON body from the exporter named in ``EMBEDS``
           (then regenerate the page's ``.ipynb`` with ``make notebooks NB=…``);
``check``  report stale shared blocks, missing modules, missing or stale page data.

    python -m labkit.devtools.players sync|pages|check
"""

from __future__ import annotations

import base64
import importlib
import json
import re
import sys
from pathlib import Path

from labkit.reader.players import FOLDER, PLAYERS

REPO = Path(__file__).resolve().parents[2]
SHARED = FOLDER / "_shared.mjs"
BEGIN, END = "// ---- shared: begin ----", "// ---- shared: end ----"

#: page (relative to the repository) → the players it embeds: name → "module:function"
#: returning the player's data for the static book (the same exporters the kernel uses)
EMBEDS: dict[str, dict[str, str]] = {
    "notebooks/07-traces/02-text-request-to-first-token.md": {
        "attention": "labkit.reader.players.attention:static_prefill_data"},
    "notebooks/07-traces/03-text-token-by-token.md": {
        "decode": "labkit.reader.players.decode:static_data"},
    "notebooks/07-traces/05-diffusion-denoising-and-decoding.md": {
        "latents": "labkit.reader.players.latents:static_data"},
    "notebooks/07-traces/10-tool-failures.md": {
        "scenarios": "labkit.reader.players.scenarios:static_data"},
    "notebooks/11-labs/03-causal-attention.md": {
        "attention": "labkit.reader.players.attention:static_data"},
    "notebooks/07-traces/11-comparing-traces.md": {
        "divergence": "labkit.reader.players.divergence:static_data"},
}

_FENCE = re.compile(r"^(?P<fence>`{3,})\{anywidget\}\s+(?P<esm>\S+)[^\n]*\n(?P<options>(?::[^\n]*\n)*)"
                    r"(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)


# -- the shared block ------------------------------------------------------------------
def shared_block() -> str:
    return SHARED.read_text(encoding="utf-8").strip("\n")


def with_shared(text: str, name: str = "module") -> str:
    """``text`` with its shared block replaced by the current ``_shared.mjs``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{name}: expected the markers {BEGIN!r} … {END!r}")
    return text[:start + len(BEGIN)] + "\n" + shared_block() + "\n" + text[end:]


def sync() -> list[str]:
    changed = []
    for file, _ in PLAYERS.values():
        path = FOLDER / file
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        new = with_shared(text, file)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(file)
    return changed


def module_problems(root: Path = REPO) -> list[str]:
    """Each player's module under ``root``: present, its shared block current, a default export."""
    problems = []
    folder = root / FOLDER.relative_to(REPO)
    for name, (file, _) in PLAYERS.items():
        path = folder / file
        if not path.exists():
            problems.append(f"player {name!r}: its module {path.relative_to(root)} is missing")
            continue
        text = path.read_text(encoding="utf-8")
        try:
            if with_shared(text, file) != text:
                problems.append(f"{file}: shared block is stale; run `python -m labkit.devtools.players sync`")
        except ValueError as error:
            problems.append(str(error))
        if "export default" not in text or "render" not in text:
            problems.append(f"{file}: no `export default {{ render }}`")
    return problems


# -- the pages ---------------------------------------------------------------------------
def embedded(page: Path) -> dict[str, dict]:
    """The ``{anywidget}`` directives of a page: player name → {"esm", "body" (parsed or None), "raw"}."""
    found = {}
    for match in _FENCE.finditer(page.read_text(encoding="utf-8")):
        name = Path(match["esm"]).stem
        try:
            body = json.loads(match["body"]) if match["body"].strip() else None
        except json.JSONDecodeError:
            body = None
        found[name] = {"esm": match["esm"], "body": body, "raw": match["body"]}
    return found


def expected_body(spec: str) -> dict:
    module, _, function = spec.partition(":")
    return {"data": getattr(importlib.import_module(module), function)()}


def encode(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def structure_problems(root: Path = REPO) -> list[str]:
    """Cheap checks (no runtime): every embed present, its module file exists, its data present."""
    problems = []
    for rel, players in EMBEDS.items():
        page = root / rel
        if not page.exists():
            problems.append(f"{rel}: page missing")
            continue
        found = embedded(page)
        for name in players:
            if name not in found:
                problems.append(f"{rel}: no {{anywidget}} directive for the {name} player")
                continue
            esm = (page.parent / found[name]["esm"]).resolve()
            if not esm.is_file():
                problems.append(f"{rel}: the {name} player's module {found[name]['esm']} does not exist")
            body = found[name]["body"]
            if not isinstance(body, dict) or not isinstance(body.get("data"), dict) \
                    or body["data"].get("player") != name:
                problems.append(f"{rel}: the {name} player has no data (expected a JSON body "
                                f'{{"data": {{"player": "{name}", …}}}}); run `python -m labkit.devtools.players pages`')
    return problems


#: how far a stored number may sit from a fresh export (another CPU's BLAS kernel moves the
#: last digits of float32 results; the data keeps 4 decimals)
FLOAT_SLACK = 2e-4


def difference(stored, fresh, path: str = "data") -> str | None:
    """Where ``stored`` and ``fresh`` player data first differ (None: the same), numbers within
    ``FLOAT_SLACK``, quantised latents within one level, preview images within 3 of 255."""
    if isinstance(stored, dict) and isinstance(fresh, dict):
        if list(stored) != list(fresh):
            return f"{path}: keys {list(stored)[:8]} vs {list(fresh)[:8]}"
        for key in stored:
            found = difference(stored[key], fresh[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(stored, list) and isinstance(fresh, list):
        if len(stored) != len(fresh):
            return f"{path}: {len(stored)} items vs {len(fresh)}"
        for i, (a, b) in enumerate(zip(stored, fresh, strict=True)):
            found = difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(stored, bool) or isinstance(fresh, bool) or stored is None or fresh is None:
        return None if stored is fresh or stored == fresh else f"{path}: {stored!r} vs {fresh!r}"
    if isinstance(stored, (int, float)) and isinstance(fresh, (int, float)):
        return None if abs(stored - fresh) <= FLOAT_SLACK else f"{path}: {stored!r} vs {fresh!r}"
    if isinstance(stored, str) and isinstance(fresh, str) and stored != fresh:
        if stored.startswith("data:image/") and fresh.startswith("data:image/"):
            return None if _pixel_gap(stored, fresh) <= 3 else f"{path}: the preview image differs"
        if ".latent[" in path:
            import numpy as np
            a, b = (np.frombuffer(base64.b64decode(x), dtype=np.uint8).astype(int) for x in (stored, fresh))
            return None if a.shape == b.shape and np.abs(a - b).max() <= 1 else f"{path}: latent values differ"
        return f"{path}: {stored[:60]!r} vs {fresh[:60]!r}"
    return None if stored == fresh else f"{path}: {stored!r} vs {fresh!r}"


def _pixel_gap(a: str, b: str) -> int:
    import io

    import numpy as np
    from PIL import Image

    pa, pb = (np.asarray(Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))), dtype=int) for u in (a, b))
    return int(np.abs(pa - pb).max()) if pa.shape == pb.shape else 255


def stale_pages(root: Path = REPO, fresh: dict | None = None) -> list[str]:
    """Embeds whose stored data differs from what the exporters compute now (runs the runtimes;
    ``fresh``: spec → body already computed)."""
    problems = []
    for rel, players in EMBEDS.items():
        if not (root / rel).exists():                      # reported by structure_problems
            continue
        found = embedded(root / rel)
        for name, spec in players.items():
            if name not in found:
                continue
            body = (fresh or {}).get(spec) or json.loads(encode(expected_body(spec)))
            where = difference(found[name]["body"], body)
            if where:
                problems.append(f"{rel}: the {name} player's data differs from the exporter's at {where}; "
                                "run `python -m labkit.devtools.players pages`")
    return problems


def write_pages(root: Path = REPO) -> list[str]:
    changed = []
    for rel, players in EMBEDS.items():
        page = root / rel
        text = page.read_text(encoding="utf-8")
        for name, spec in players.items():
            body = encode(expected_body(spec)) + "\n"

            def replace(match, name=name, body=body):
                if Path(match["esm"]).stem != name:
                    return match[0]
                head = match[0][: match.start("body") - match.start()]
                return head + body + match["fence"]

            text = _FENCE.sub(replace, text)
        if text != page.read_text(encoding="utf-8"):
            page.write_text(text, encoding="utf-8")
            changed.append(rel)
    return changed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["sync"]:
        print("\n".join(sync()) or "every player module is current")
        return 0
    if argv == ["pages"]:
        print("\n".join(write_pages()) or "every page's player data is current")
        return 0
    if argv == ["check"]:
        problems = module_problems() + structure_problems() + stale_pages()
        print("\n".join(problems) or "players: modules and page data current")
        return 1 if problems else 0
    print("usage: python -m labkit.devtools.players sync|pages|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
