"""The edition's language: the words the kit speaks (check feedback, exercise texts, players' labels); code cells
are the same in both editions.  The Chinese project carries ``zh/.labkit-edition``, and a page's kernel runs in the
page's folder.  English is the source text: another language's catalogue is keyed by the English template.
"""

import os
import tomllib
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "zh")
VARIABLE = "LABKIT_LANG"
MARKER = ".labkit-edition"


def language(at: Path | None = None) -> str:
    """``"en"`` or ``"zh"``: the environment variable, else the nearest ``.labkit-edition`` at or above
    ``at`` (default: the current folder; a page's bundle passes the page's folder), else English."""
    chosen = os.environ.get(VARIABLE)
    if chosen is not None:
        if chosen.strip() not in LANGUAGES:
            raise ValueError(f"${VARIABLE} must be one of {list(LANGUAGES)} (or unset), got {chosen!r}")
        return chosen.strip()
    return _from_marker(Path(at).resolve() if at is not None else Path.cwd())


@lru_cache(maxsize=8)
def _from_marker(folder: Path) -> str:
    """The language the first ``.labkit-edition`` at or above ``folder`` names (``"en"`` without one)."""
    for place in (folder, *folder.parents):
        marker = place / MARKER
        if marker.is_file():
            found = marker.read_text(encoding="utf-8").strip()
            if found not in LANGUAGES:
                raise ValueError(f"{marker} must hold one line, one of {list(LANGUAGES)}, got {found!r}")
            return found
    return "en"


def forget() -> None:
    """Read the ``.labkit-edition`` files again on the next ``language()`` (a test switching editions)."""
    _from_marker.cache_clear()


@lru_cache(maxsize=16)
def catalogue(path: Path) -> dict[str, str]:
    """A translation catalogue (TOML: English template → translated template), read once."""
    found = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    return {" ".join(k.split()): v for k, v in found.items() if isinstance(v, str)}


def translate(folder: Path, template: str, **fields) -> str:
    """``template`` in the current language (looked up in ``folder/<language>.toml`` unless English),
    then formatted with ``fields`` (a template without fields is not formatted: its braces are text).
    A template the catalogue lacks stays English (a test finds every one)."""
    lang = language()
    if lang != "en":
        template = catalogue(Path(folder) / f"{lang}.toml").get(" ".join(template.split()), template)
    return template.format(**fields) if fields else template
