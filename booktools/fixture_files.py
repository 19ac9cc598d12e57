"""Running the fixture recipes: where a build writes, the deterministic ``.npz`` writer, ``build`` and ``check``.

A recipe is ``build(dest) -> list[str]``: it writes its files under ``dest`` (the fixtures root) and returns
their paths relative to it.  ``.npz`` files are written with fixed zip timestamps, so a rebuild is
byte-identical; ``check`` rebuilds in a temporary folder and compares with the stored fixtures.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from labkit.core.fixtures import fixtures_root, load_arrays
from labkit.core.strictjson import read_json_file

#: a recipe takes a destination folder (the fixtures root) and returns the files it wrote,
#: relative to that folder
Recipe = Callable[[Path], list[str]]

#: Float arrays drawn from a seeded generator rebuild to the same bits; 1e-6 leaves room for a
#: different libm in the fan-in scaling and nothing more.
SEEDED_ARRAY_BOUND = 1e-6
#: Arrays solved by least squares through float32 forward passes move with the BLAS kernel and
#: thread count.  (file, array) → bound on max |rebuilt − stored|; see fixtures/README.md.
#: toy-decoder-v1's head: cond(H) = 4.5 for the five decision states, max |W_out| = 4.9, and a
#: kernel moves each float32 hidden value by a few ulps (~1e-6 relative after two layers), so a
#: kernel moves W_out by ≲ 4.5 · 4.9 · 1e-6 ≈ 2e-5 (observed: 1.7e-6); another recipe (e.g. the
#: next seed) moves it by ~7.  What the weights do is checked exactly by the golden trace rebuilt
#: from them (every argmax, mask and listed logit) and by the recipe's own |logit − target| < 1e-5.
FITTED_ARRAY_BOUNDS = {("text/toy-decoder-v1.npz", "output"): 1e-4}


def writable_fixtures_root() -> Path:
    """Where ``labkit fixtures build`` writes: ``$LABKIT_FIXTURES`` when set, else the clone's
    ``fixtures/`` (an editable install reads it through the ``labkit/fixtures`` link).  An install
    from a wheel has no clone to write into: a clear error says what to do."""
    root = fixtures_root().resolve()
    if os.environ.get("LABKIT_FIXTURES") or (root.parent / "pyproject.toml").is_file():
        return root
    raise FileNotFoundError(
        f"labkit fixtures build rewrites the fixtures/ folder of a clone of the book, and this labkit "
        f"was installed from a wheel (its fixtures, {str(root)!r}, are package data); run it in a clone "
        "installed with `pip install -e .`, or set LABKIT_FIXTURES to the folder to write"
    )


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> Path:
    """Write arrays to an ``.npz`` whose bytes depend on the arrays only (sorted, fixed dates); labkit reads it
    with ``labkit.core.fixtures.load_arrays``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())
    return path


def build(recipes: dict[str, Recipe], dest: str | Path | None = None) -> list[str]:
    """Run ``recipes`` into ``dest`` (default: the clone's fixtures, ``writable_fixtures_root``);
    return the files written."""
    dest = Path(dest) if dest is not None else writable_fixtures_root()
    return [str(p) for recipe in recipes.values() for p in recipe(dest)]


def _same_file(built: Path, stored: Path) -> str | None:
    """None when equal; otherwise a sentence saying what differs."""
    if not stored.exists():
        return "missing from fixtures/"
    if built.read_bytes() == stored.read_bytes():
        return None
    if built.suffix == ".json":
        read_json_file(stored)  # a damaged file says what is wrong, not only that it differs
    if built.suffix == ".npz":
        a, b = load_arrays(built), load_arrays(stored)
        if a.keys() != b.keys():
            return f"array names differ: {sorted(a.keys() ^ b.keys())}"
        for key in sorted(a):
            if a[key].shape != b[key].shape or a[key].dtype != b[key].dtype:
                return f"array {key!r}: {a[key].dtype}{list(a[key].shape)} vs {b[key].dtype}{list(b[key].shape)}"
            if np.issubdtype(a[key].dtype, np.floating):
                gap = float(np.max(np.abs(a[key].astype(np.float64) - b[key].astype(np.float64)), initial=0.0))
                bound = FITTED_ARRAY_BOUNDS.get((stored.parent.name + "/" + stored.name, key), SEEDED_ARRAY_BOUND)
                if gap > bound:
                    return f"array {key!r} differs by up to {gap:.3g} (bound {bound:g})"
            elif not np.array_equal(a[key], b[key]):
                return f"array {key!r} differs"
        return None
    return "contents differ"


def check(recipes: dict[str, Recipe]) -> list[str]:
    """Rebuild ``recipes`` in a temporary folder; return the differences (empty = match)."""
    problems = []
    root = fixtures_root()
    with tempfile.TemporaryDirectory() as tmp:
        for rel in build(recipes, tmp):
            try:
                reason = _same_file(Path(tmp) / rel, root / rel)
            except ValueError as exc:  # a damaged stored file is reported, and the check goes on
                reason = str(exc)
            if reason:
                problems.append(f"{rel}: {reason}")
    return problems
