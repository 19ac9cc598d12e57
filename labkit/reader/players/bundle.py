"""One file per player: its module with ``_shared.mjs`` inlined where it imports it.

A player's source is a plain ES module that imports its helpers from ``./_shared.mjs``.
Neither host can follow that import: anywidget ships ``_esm`` to the browser as one string,
and MyST's ``{anywidget}`` directive copies one module file to the site.  ``bundle`` is the
book's whole build step for them: the import line is replaced by the shared module's text
(its ``export`` keywords dropped) and, for a page of the static book, the shared
``const EMBEDDED = null;`` by the page's data.

    bundle("decode")                 # what the kernel's widget loads
    bundle("decode", data={...})     # what a page of the static book loads
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from labkit.reader.players import FOLDER, PLAYERS

SHARED = "_shared.mjs"
IMPORT = re.compile(r'^import \{(?P<names>[^}]*)\} from "\./_shared\.mjs";\n', re.M)
EXPORT = re.compile(r"^export (?=(?:function|const) )", re.M)
EXPORTED = re.compile(r"^export (?:function|const) (\w+)", re.M)
EMPTY = "const EMBEDDED = null;"


def embedded_line(data: dict) -> str:
    """The line that carries a page's data (compact JSON, ASCII only)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return f"const EMBEDDED = {text};"


def bundle(name: str, data: dict | None = None, folder: Path = FOLDER) -> str:
    """Player ``name``'s module as one file (``folder``: where the ``.mjs`` sources are)."""
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; expected one of {list(PLAYERS)}")
    file = f"{name}.mjs"
    source = (folder / file).read_text(encoding="utf-8")
    shared = (folder / SHARED).read_text(encoding="utf-8")
    imports = list(IMPORT.finditer(source))
    if len(imports) != 1:
        raise ValueError(f'{file}: expected one line `import {{ … }} from "./_shared.mjs";`')
    wanted = {n.strip() for n in imports[0]["names"].split(",") if n.strip()}
    unknown = sorted(wanted - set(EXPORTED.findall(shared)))
    if unknown:
        raise ValueError(f"{file} imports {unknown}, which {SHARED} does not export")
    if shared.count(EMPTY) != 1:
        raise ValueError(f"{SHARED}: expected one line {EMPTY!r}")
    inlined = EXPORT.sub("", shared)
    if data is not None:
        inlined = inlined.replace(EMPTY, embedded_line(data))
    start, end = imports[0].span()
    return f"{source[:start]}// ---- {SHARED}, inlined ----\n{inlined}// ---- end of {SHARED} ----\n{source[end:]}"
