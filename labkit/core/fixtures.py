"""Where the fixtures live and how labkit reads them (a damaged file is a clear error), the book's folder, and
stable JSON for the reports the commands write.

The recipes that write the fixtures come with the book's clone (``booktools/recipes/``, ``labkit fixtures``).
"""

import importlib.util
import json
import math
import os
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

from labkit.core.strictjson import read_json_file

#: what a missing or damaged fixture's error says to do
REBUILD = "run `labkit fixtures build` in the book's clone, or reinstall labkit (its fixtures are package data)"


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
        raise FileNotFoundError(f"fixture {'/'.join(parts)!r} is missing; {REBUILD}")
    return path


def load_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """Read an ``.npz`` written by the recipes (``booktools.fixture_files.save_arrays``); a damaged file gives a
    clear error."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weight file {str(path)!r} does not exist; {REBUILD}")
    try:
        with zipfile.ZipFile(path) as archive:
            return {info.filename.removesuffix(".npy"): _read_member(archive, info) for info in archive.infolist()}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ValueError(f"weight file {path.name!r} is corrupted ({exc}); {REBUILD}") from None


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
        raise FileNotFoundError(f"fixture {str(path)!r} is missing; {REBUILD}") from None
