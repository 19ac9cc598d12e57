"""Players: the book's interactive views, drawn in the browser from data the kernels computed
(CONTRIBUTING.md, "Players"): an ES module ``<name>.mjs`` here and its exporter ``<name>.py``, registered
in ``catalog.PLAYERS``; the kernel's widget is ``base.player(name)``.

``bundle`` is the one build step: neither host follows a module's ``./_shared.mjs`` import (anywidget
ships ``_esm`` as one string, MyST's ``{anywidget}`` copies one file), so the import line is replaced by
the shared module's text (its ``export`` keywords dropped) and, for a page of the static book,
``const EMBEDDED = null;`` by the page's data.
"""

import json
import re
from pathlib import Path

from labkit.core.edition import LANGUAGES

FOLDER = Path(__file__).resolve().parent
SHARED = "_shared.mjs"

IMPORT = re.compile(r'^import \{(?P<names>[^}]*)\} from "\./_shared\.mjs";\n', re.M)
EXPORT = re.compile(r"^export (?=(?:function|const) (\w+))", re.M)  # its group: the exported name
EMPTY = "const EMBEDDED = null;"
NO_LANGUAGE = "const LANG = null;"


def bundle(name: str, data: dict | None = None, folder: Path = FOLDER, lang: str = "en") -> str:
    """Player ``name``'s module as one file (``folder``: where the ``.mjs`` sources are), carrying
    ``data`` as compact ASCII JSON when given, and speaking ``lang`` (``en`` or ``zh``: the edition's)."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {list(LANGUAGES)}, got {lang!r}")
    file = f"{name}.mjs"
    if name == SHARED.removesuffix(".mjs") or not (folder / file).is_file():
        raise ValueError(f"no player {name!r}: {folder / file} is not a player's module")
    source = (folder / file).read_text(encoding="utf-8")
    shared = (folder / SHARED).read_text(encoding="utf-8")
    imports = list(IMPORT.finditer(source))
    if len(imports) != 1:
        raise ValueError(f'{file}: expected one line `import {{ … }} from "./_shared.mjs";`')
    wanted = {n.strip() for n in imports[0]["names"].split(",") if n.strip()}
    unknown = sorted(wanted - set(EXPORT.findall(shared)))
    if unknown:
        raise ValueError(f"{file} imports {unknown}, which {SHARED} does not export")
    for line in (EMPTY, NO_LANGUAGE):
        if shared.count(line) != 1:
            raise ValueError(f"{SHARED}: expected one line {line!r}")
    inlined = EXPORT.sub("", shared).replace(NO_LANGUAGE, f"const LANG = {json.dumps(lang)};")
    if data is not None:
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        inlined = inlined.replace(EMPTY, f"const EMBEDDED = {text};")
    start, end = imports[0].span()
    return f"{source[:start]}// ---- {SHARED}, inlined ----\n{inlined}// ---- end of {SHARED} ----\n{source[end:]}"
