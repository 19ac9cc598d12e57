"""The offline book check (toc, players, citations, every page parsed, every reference resolved) and the site build.

The check asks that every chapter page cite a source, and runs ``myst build --site`` with mystmd pointed at
a closed loopback port, so it never reaches the network.  ``build --site`` is ``myst build --html``, with the
links of the repository it is built from (``booktools.publish``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import yaml

from booktools import assets, players, publish
from labkit.core import strictjson
from labkit.core.fixtures import book_root

_MESSAGE = re.compile(r"^(⛔️|⚠️)\s*(.*)$")
_THEME_NOISE = ("api.mystmd.org", "127.0.0.1:9", "template", "ECONNREFUSED", "ENOTFOUND")


def toc_files(config: dict) -> list[str]:
    """Every ``file:`` of the toc, depth first."""
    return _files(config.get("project", {}).get("toc"))


def chapter_files(config: dict) -> list[str]:
    """The ``file:`` entries inside a toc chapter (an entry with ``children``), depth first."""
    return [rel for entry in config.get("project", {}).get("toc") or [] for rel in _files(entry.get("children"))]


def _files(entries: list[dict] | None) -> list[str]:
    found = []
    for entry in entries or []:
        found += [entry["file"]] if "file" in entry else []
        found += _files(entry.get("children"))
    return found


def load_config(root: Path | None = None) -> dict:
    return yaml.safe_load((book_root(root) / "myst.yml").read_text(encoding="utf-8"))  # book_root: it exists


def toc_problems(root: Path) -> list[str]:
    config = load_config(root)
    listed = toc_files(config)
    problems = [] if listed else ["myst.yml has no table of contents"]
    problems += [f"toc entry {rel!r} points nowhere" for rel in listed if not (root / rel).exists()]
    problems += [f"toc entry {rel!r} is listed twice" for rel, count in Counter(listed).items() if count > 1]
    notebooks = [p.relative_to(root).as_posix() for p in (root / "notebooks").rglob("*.ipynb")]
    problems += [
        f"notebook {rel!r} is missing from the toc in myst.yml"
        for rel in sorted(notebooks)
        if rel not in listed and ".ipynb_checkpoints" not in rel.split("/")
    ]
    if config.get("site", {}).get("template") != "book-theme":
        problems.append("myst.yml must set site.template: book-theme")
    return problems


_CITE_ROLE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]*)`")
_BIB_ENTRY = re.compile(r"^@\w+\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)


def bibliography_keys(root: Path) -> tuple[set[str], list[str]]:
    """Every entry key of the ``project.bibliography`` files, and the problems finding them."""
    found = {rel: root / rel for rel in load_config(root).get("project", {}).get("bibliography") or []}
    keys = {key for path in found.values() if path.exists() for key in _BIB_ENTRY.findall(path.read_text("utf-8"))}
    return keys, [
        f"bibliography {rel!r} listed in myst.yml does not exist" for rel, p in found.items() if not p.exists()
    ]


def cited_keys(text: str) -> list[str]:
    """The keys of every ``{cite…}`…``` role in ``text``, in order (keys split on ``,`` or ``;``)."""
    return [key.strip() for role in _CITE_ROLE.findall(text) for key in re.split(r"[,;]", role) if key.strip()]


# A page's list of sources is the References section the site renders from its citations; a
# hand-written one beside it lists every source twice.
_SOURCES_HEADING = re.compile(
    r"^#{1,6}[ \t]+(?:primary sources|sources|references|bibliography|further reading)[ \t]*$", re.I | re.M
)
# An item that opens with a bold lead-in (`- **Which group.** …`) is an explanation that cites, not
# a source entry: a Chinese paragraph is kept on one line, so its citation is on the item's first line.
_CITING_LIST = re.compile(
    r"(?:^[ \t]*(?:[-*+]|\d+[.)])[ \t](?!\*\*)[^\n]*\{cite[^\n]*\n(?:[ \t]+\S[^\n]*\n)*){2,}", re.M
)


def hand_written_sources(text: str) -> list[str]:
    """What in a page's Markdown lists its sources by hand: a heading such as "Primary sources",
    or two list items in a row that each cite."""
    found = [match.group(0).strip() for match in _SOURCES_HEADING.finditer(text)]
    return found + [match.group(0).split("\n")[0].strip() for match in _CITING_LIST.finditer(text + "\n")]


def citation_problems(root: Path) -> list[str]:
    """A citation whose key no bibliography file holds, a chapter page that cites nothing, and a
    page that cites and also lists its sources by hand, page by page (the ``.ipynb`` the book builds)."""
    config = load_config(root)
    keys, problems = bibliography_keys(root)
    bibliography = ", ".join(config.get("project", {}).get("bibliography") or ["none listed"])
    chapter_pages = set(chapter_files(config))
    for rel in toc_files(config):
        path = root / rel
        if path.suffix != ".ipynb" or not path.exists():
            continue
        cells = strictjson.read_json_file(path).get("cells", [])
        text = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")
        cited = cited_keys(text)
        if rel in chapter_pages and not cited:
            problems.append(f"{rel}: a chapter page that cites no primary source ({{cite:p}}`key` in a sentence)")
        problems += [
            f"{rel}: lists its sources by hand ({line[:60]!r}) beside the References the site makes from its citations"
            for line in (hand_written_sources(text) if cited else [])
        ]
        problems += [
            f"{rel}: citation {key!r} is not in the bibliography ({bibliography})" for key in cited if key not in keys
        ]
    return problems


def myst_executable() -> str | None:
    here = Path(sys.executable).parent / "myst"
    return str(here) if here.exists() else shutil.which("myst")


def site_content(root: Path, timeout: int = 120) -> tuple[Path, str]:
    """Build every page's content JSON offline with ``myst build --site`` (mystmd's API pointed
    at a closed loopback port): the folder of the JSON files, and what mystmd printed."""
    myst = myst_executable()
    if myst is None:
        raise FileNotFoundError("mystmd is not installed (pip install mystmd)")
    offline = {"API_URL": "http://127.0.0.1:9", "MYSTMD_DISABLE_UPDATE_CHECK": "1", "NO_UPDATE_NOTIFIER": "1"}
    env = {**os.environ, **offline, "CI": "true"}
    proc = subprocess.run(
        [myst, "build", "--site", "--ci"], cwd=root, env=env, capture_output=True, text=True, timeout=timeout
    )
    return root / "_build" / "site" / "content", proc.stdout + "\n" + proc.stderr


def myst_problems(root: Path, timeout: int = 120) -> list[str]:
    """Parse and cross-reference every page with mystmd, offline."""
    try:
        content, printed = site_content(root, timeout)
    except FileNotFoundError as err:
        return [f"{err}; the book cannot be checked"]
    problems = link_problems(content)
    shutil.rmtree(content.parent, ignore_errors=True)
    for line in printed.splitlines():
        match = _MESSAGE.match(line.strip())
        if match and not any(noise in line for noise in _THEME_NOISE):
            problems.append(match.group(2).strip())
    if "Built" not in printed:
        problems.append("mystmd built no page:\n" + printed[-2000:])
    return problems


def build_site(root: Path, repository: str | None = None) -> int:
    """The players' page bundles, then ``myst build --html`` (downloads the theme: needs the
    internet), with the repository's links and launch button (``publish``) when the repository
    the site is built from is known (``myst.yml`` carries them for the build only)."""
    repository = publish.repository_of(root, repository)
    config = root / "myst.yml"
    original = config.read_text(encoding="utf-8")
    published = publish.publish_config(original, repository)
    print("\n".join(players.pages(root)) or "every page's player data is current")
    myst = myst_executable()
    if myst is None:
        print("mystmd is not installed (pip install mystmd)", file=sys.stderr)
        return 1
    print(f"the site links to {repository} and opens it on Binder" if repository else "no repository known: no links")
    config.write_text(published, encoding="utf-8")
    try:
        status = subprocess.run([myst, "build", "--html"], cwd=root).returncode
    finally:
        config.write_text(original, encoding="utf-8")
    if status == 0 and repository:
        publish.edit_source_links(root / "_build" / "html", repository)
    return self_contained(root / "_build" / "html", root / "build" / "npm") if status == 0 else status


def self_contained(html: Path, cache: Path) -> int:
    """Serve what the built site at ``html`` asks CDNs for from the site, and its CJK web font."""
    base_url = os.environ.get("BASE_URL", "")
    try:
        served = assets.localise(html, cache, base_url)
        font = assets.cjk_font(html)
    except RuntimeError as err:
        print(f"the site would need a CDN or a CJK font on the reader's machine: {err}", file=sys.stderr)
        return 1
    print(
        "served from the site: " + (", ".join(sorted({f"{a.package}@{a.version}" for a in served})) or "no CDN asset")
    )
    print(f"CJK web font: {font.parent.relative_to(html)}" if font else "no CJK text: no CJK web font")
    return 0


def player_problems(root: Path) -> list[str]:
    """Every page's ``{anywidget}`` players: each module bundles, each page's bundle holds the
    current code and the player's data (``booktools.players``)."""
    modules = players.module_problems(root) if (root / "labkit").is_dir() else []
    return modules + players.structure_problems(root)


def mdast_nodes(node):
    """Every node of a content JSON's tree (dicts nested in dicts and lists), depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from mdast_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from mdast_nodes(value)


def link_problems(content: Path) -> list[str]:
    """Links mystmd resolved wrongly without a warning: a link to a page's ``.md`` or
    ``.ipynb`` that became a file to download (``myst/md-page-links.mjs`` missing or
    broken), and a glossary link that is not a reference to its entry."""
    problems = []
    for page in sorted(content.glob("*.json")):
        tree = strictjson.read_json_file(page).get("mdast", {})
        for node in mdast_nodes(tree):
            source = node.get("urlSource") or ""
            target = source.split("#")[0]
            if node.get("type") == "link" and node.get("static") and target.endswith((".md", ".ipynb")):
                problems.append(f"{page.stem}: the link to {source!r} is a download, not the page")
            if "#term-" in source and not (node.get("type") == "crossReference" and node.get("resolved")):
                problems.append(f"{page.stem}: the glossary link {source!r} does not reach its entry")
    return problems


def check(root: Path) -> list[str]:
    """Build what the site needs offline and report every problem: the toc, the citations, what
    mystmd says of each page, and the players (their page bundles are written first, as the
    published build does; they are build products, not files of the repository)."""
    problems = toc_problems(root)
    with contextlib.suppress(ValueError, OSError):  # a player that does not bundle: player_problems names it
        players.pages(root)
    if not problems:
        problems += citation_problems(root) + myst_problems(root)
    return problems + player_problems(root)
