"""Where the fixtures live, deterministic array files, and building/checking fixture recipes.

A recipe is ``build(dest) -> list[str]`` (each kind names its own); ``.npz`` files are written with
fixed zip timestamps, so a rebuild is byte-identical.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import sys
import tempfile
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np

from labkit.core.strictjson import read_json_file


def fixtures_root() -> Path:
    """The fixtures folder: ``$LABKIT_FIXTURES`` when set, else the package data ``labkit/fixtures``
    (in a clone, a link to the top-level ``fixtures/``; in a wheel, the files themselves)."""
    override = os.environ.get("LABKIT_FIXTURES")
    root = Path(override) if override else Path(str(resources.files("labkit") / "fixtures"))
    if root.is_file() and not override:  # a checkout without symlinks keeps the link as a file naming its target
        root = (root.parent / root.read_text(encoding="utf-8").strip()).resolve()
    if not root.is_dir():
        raise FileNotFoundError(
            f"fixtures folder {str(root)!r} not found; reinstall labkit (its fixtures are package data) "
            "or set LABKIT_FIXTURES to a folder holding them"
        )
    return root


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


def book_root(given: str | Path | None = None) -> Path:
    """The book's folder (a clone holding ``myst.yml`` and ``notebooks/``), for the commands that
    need its pages: ``given`` itself, else the current folder or the nearest folder above it."""
    if given is not None:
        candidates = [Path(given).resolve()]
    else:
        here = Path.cwd().resolve()
        candidates = [here, *here.parents]
    books = [f for f in candidates if (f / "myst.yml").is_file() and (f / "notebooks").is_dir()]
    # an edition's project (zh/, marked by .labkit-edition) inside the book is not the book: the
    # kernel of a zh page, run in its folder, finds the clone's benchmarks/ and fixtures
    if given is None and len(books) > 1 and (books[0] / ".labkit-edition").is_file():
        return books[1]
    if books:
        return books[0]
    where = str(candidates[0]) if given is not None else f"{candidates[0]} or any folder above it"
    raise FileNotFoundError(
        f"no book at {where} (a book's folder holds myst.yml and notebooks/); "
        "run this inside a clone of the book, or name its folder"
    )


def import_from_book(name: str, given: str | Path | None = None):
    """Import the package ``name`` that lives in the book's folder (``benchmarks``: it runs from the
    clone and is not part of labkit), without putting that folder on ``sys.path``."""
    if name in sys.modules:
        return sys.modules[name]
    init = book_root(given) / name / "__init__.py"
    spec = importlib.util.spec_from_file_location(name, init) if init.is_file() else None
    if spec is None:
        raise ModuleNotFoundError(f"no package {name!r} in the book's folder ({init.parent} is not one)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def fixture_dir(domain: str, root: str | Path | None = None) -> Path:
    """Folder of a domain's fixtures: ``root`` itself when given, else ``fixtures/<domain>``."""
    return Path(root) if root is not None else fixtures_root() / domain


def fixture_path(*parts: str) -> Path:
    path = fixtures_root().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"fixture {'/'.join(parts)!r} is missing; run `labkit fixtures build`")
    return path


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> Path:
    """Write arrays to an ``.npz`` whose bytes depend on the arrays only (sorted, fixed dates)."""
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


def load_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """Read an ``.npz`` written by ``save_arrays``; a damaged file gives a clear error."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weight file {str(path)!r} does not exist; run `labkit fixtures build`")
    try:
        with zipfile.ZipFile(path) as archive:
            return {info.filename.removesuffix(".npy"): _read_member(archive, info) for info in archive.infolist()}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ValueError(
            f"weight file {path.name!r} is corrupted ({exc}); rebuild it with `labkit fixtures build`"
        ) from None


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One array; a header claiming more bytes than the member holds is refused before allocating."""
    with archive.open(info) as handle:
        version = np.lib.format.read_magic(handle)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in read_header:
            raise ValueError(f"array {info.filename!r} has .npy format version {version}, expected 1.0 or 2.0")
        shape, _, dtype = read_header[version](handle)
        claimed, held = math.prod(shape) * dtype.itemsize, info.file_size - handle.tell()
        if claimed > held:
            raise ValueError(f"array {info.filename!r} claims shape {list(shape)} ({claimed} bytes) but holds {held}")
    with archive.open(info) as handle:
        return np.lib.format.read_array(handle, allow_pickle=False)


def write_json(path: str | Path, data) -> Path:
    """Pretty, stable JSON (sorted only where the caller sorted; UTF-8; trailing newline), written
    whole or not at all: a temporary file beside it, then renamed (a full disk leaves the old file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise ValueError(f"could not write {str(path)!r}: {exc.strerror or exc}") from None
    return path


def read_json(path: str | Path):
    path = Path(path)
    try:
        return read_json_file(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"fixture {str(path)!r} is missing; run `labkit fixtures build`") from None


#: a recipe takes a destination folder (the fixtures root) and returns the files it wrote,
#: relative to that folder
Recipe = Callable[[Path], list[str]]


def build(recipes: dict[str, Recipe], dest: str | Path | None = None) -> list[str]:
    """Run ``recipes`` into ``dest`` (default: the clone's fixtures, ``writable_fixtures_root``);
    return the files written."""
    dest = Path(dest) if dest is not None else writable_fixtures_root()
    return [str(p) for recipe in recipes.values() for p in recipe(dest)]


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
