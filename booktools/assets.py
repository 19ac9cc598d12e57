"""A static site that needs no CDN: every asset the built site asks a CDN for, served from the site.

The book theme links KaTeX's stylesheet (and its fonts), Font Awesome and a matplotlib-widget
stylesheet from public CDNs (``cdn.jsdelivr.net/npm/PKG@VER/PATH``, ``cdnjs.cloudflare.com/ajax/libs/
LIB/VER/PATH``); offline or behind a school's firewall every formula then shows twice.  ``localise``
finds every such address in the built pages and scripts, fetches each package at the version asked
for from the npm registry (``npm pack``: the package's own files, no dependencies, cached under
``build/npm``), unpacks it into the site's ``vendor/PKG@VER/`` and rewrites the addresses to it.

``cjk_font`` makes a web font of exactly the CJK characters the site uses (fontTools' subsetter over
WenQuanYi Micro Hei, Apache-2.0, the font the figures use), so a reader with no CJK font sees the
traces' Chinese tokens, never □: ``vendor/cjk/``, with its licence, and ``vendor/cjk/cjk.css``
naming it "WenQuanYi Micro Hei" for the CJK ranges only (the players' font list and the site's
stylesheet, ``myst/site.css``, which imports ``vendor/cjk/cjk.css``, name it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from labkit.core import strictjson

#: the files of a built site that can hold an asset's address
TEXT_SUFFIXES = (".html", ".js", ".mjs", ".css", ".json")
VENDOR = "vendor"
#: cdnjs's library names that are not their npm package's
CDNJS_PACKAGES = {"mathjax": "mathjax", "font-awesome": "font-awesome"}
_CDN = re.compile(
    r"https://(?:cdn\.jsdelivr\.net/npm/(?P<npm>(?:@[\w.-]+/)?[\w.-]+)@(?P<npm_version>[\w.+-]+)"
    r"|cdnjs\.cloudflare\.com/ajax/libs/(?P<lib>[\w.-]+)/(?P<lib_version>[\w.+-]+))"
    r"/(?P<path>[\w./@+-]+)"
)
CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
CJK_FONT_LICENCE = Path("/usr/share/doc/fonts-wqy-microhei/copyright")
CJK_FAMILY = "WenQuanYi Micro Hei"
#: CJK ideographs, punctuation, kana, full-width forms: the ranges the subset font covers
CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)


@dataclass(frozen=True)
class Asset:
    """One CDN address: the npm package and version it is part of, and the file's path in it."""

    url: str
    package: str
    version: str
    path: str

    @property
    def local(self) -> str:
        """Where the site serves it, from the site's root."""
        return f"{VENDOR}/{self.package}@{self.version}/{self.path}"


def cdn_assets(text: str) -> list[Asset]:
    """Every CDN address in ``text``, in order of first appearance."""
    found = {}
    for match in _CDN.finditer(text):
        package = match["npm"] or CDNJS_PACKAGES.get(match["lib"].lower(), match["lib"].lower())
        version = match["npm_version"] or match["lib_version"]
        found.setdefault(match[0], Asset(match[0], package, version, match["path"]))
    return list(found.values())


def site_files(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file() and VENDOR not in p.parts)


def npm_package(package: str, version: str, cache: Path) -> tuple[Path, str]:
    """The unpacked folder of ``package@version`` from the npm registry (``npm pack``, cached) and
    the version it holds: ``version``, else, when the registry no longer has it, the package's
    latest (the theme pins a matplotlib-widget stylesheet npm has only in a later version)."""
    found = sorted(cache.glob(f"{package.replace('/', '+')}@*/.wanted-{version}"))
    if found:
        return found[0].parent, found[0].parent.name.rpartition("@")[2]
    for spec in (version, "latest"):
        packed = _npm_pack(f"{package}@{spec}", cache)
        if packed is not None:
            folder, served = packed
            (folder / f".wanted-{version}").touch()  # a later build asking for it takes it from the cache
            return folder, served
    raise RuntimeError(f"npm pack {package}@{version}: the npm registry has neither it nor a latest version")


def _npm_pack(spec: str, cache: Path) -> tuple[Path, str] | None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("the site's assets come from the npm registry: install node and npm (apt-get install npm)")
    cache.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "pack", spec, "--silent", "--json", "--pack-destination", str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        return None
    [packed] = strictjson.loads(proc.stdout)
    tarball, served = cache / packed["filename"], packed["version"]
    folder = cache / f"{packed['name'].replace('/', '+')}@{served}"
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(staging, filter="data")
    shutil.rmtree(folder, ignore_errors=True)
    (staging / "package").replace(folder)
    shutil.rmtree(staging, ignore_errors=True)
    tarball.unlink()
    return folder, served


def localise(html: Path, cache: Path, base_url: str = "") -> list[Asset]:
    """Serve every CDN asset of the site at ``html`` from the site: fetch, copy, rewrite.  The
    assets as served (each checked to exist in its package: a path the package lacks is an error)."""
    files = site_files(html)
    texts = {path: path.read_text(encoding="utf-8", errors="surrogateescape") for path in files}
    assets = {a.url: a for text in texts.values() for a in cdn_assets(text)}
    for url, asset in assets.items():
        source, served = npm_package(asset.package, asset.version, cache)
        if not (source / asset.path).is_file():
            raise RuntimeError(f"{asset.url}: {asset.package}@{served} has no {asset.path}")
        assets[url] = asset = Asset(url, asset.package, served, asset.path)
        dest = html / VENDOR / f"{asset.package}@{served}"
        if not dest.exists():
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".wanted-*"))
    prefix = base_url.rstrip("/")
    for path, text in texts.items():
        new = _CDN.sub(lambda m: f"{prefix}/{assets[m[0]].local}", text)
        if new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
    return list(assets.values())


def is_cjk(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in CJK_RANGES)


def cjk_characters(paths: list[Path]) -> str:
    """Every CJK character in the files at ``paths``, sorted, once each."""
    found = set()
    for path in paths:
        found.update(c for c in path.read_text(encoding="utf-8", errors="replace") if is_cjk(c))
    return "".join(sorted(found))


def cjk_font(html: Path, extra: list[Path] = ()) -> Path | None:
    """A web font (WOFF) of the CJK characters the site at ``html`` uses, its licence and the CSS
    that declares it for the CJK ranges; the CSS's path, or None when the site uses no CJK."""
    text = cjk_characters(site_files(html) + list(extra))
    if not text:
        return None
    if not CJK_FONT.is_file():
        raise RuntimeError(f"the site's CJK web font is made from {CJK_FONT}: apt-get install fonts-wqy-microhei")
    folder = html / VENDOR / "cjk"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "characters.txt").write_text(text, encoding="utf-8")
    font = folder / "wqy-microhei-subset.woff"
    from fontTools import subset  # matplotlib's dependency: installed with the kit

    subset.main(
        [str(CJK_FONT), "--font-number=0", f"--text-file={folder / 'characters.txt'}", "--flavor=woff"]
        + ["--layout-features=*", "--no-hinting", f"--output-file={font}"]
    )
    if CJK_FONT_LICENCE.is_file():
        shutil.copy(CJK_FONT_LICENCE, folder / "LICENSE")
    ranges = ", ".join(f"U+{low:04X}-{high:04X}" for low, high in CJK_RANGES)
    css = folder / "cjk.css"
    css.write_text(
        f"/* WenQuanYi Micro Hei (Apache-2.0 or GPL-3+ with font exception: LICENSE), the {len(text)} CJK\n"
        f"   characters this site uses; made at build time by booktools.assets */\n"
        f'@font-face {{ font-family: "{CJK_FAMILY}"; src: url("wqy-microhei-subset.woff") format("woff");\n'
        f"  font-display: swap; unicode-range: {ranges}; }}\n",
        encoding="utf-8",
    )
    return css
