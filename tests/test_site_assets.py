"""A static site that needs no CDN (issue 47, item 2): what the built site asks CDNs for is served
from the site (``booktools.assets.localise``: npm packages at the version asked for), and a
CJK web font of the characters the site uses is made at build time (``cjk_font``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from booktools import assets

REPO = Path(__file__).resolve().parents[1]
#: what the book theme's root and its site package link (myst-theme: themes/book/app/root.tsx,
#: packages/site/src/loaders/links.ts)
THEME_CDN = (
    "https://cdn.jsdelivr.net/npm/katex@0.15.2/dist/katex.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.css",
    "https://cdn.jsdelivr.net/npm/jupyter-matplotlib@0.11.3/css/mpl_widget.css",
)


def built_site(folder: Path, body: str = "词元 token") -> Path:
    """A site as mystmd's HTML export leaves it: a page linking the theme's CDN stylesheets, a
    script holding one of the addresses, and CJK text."""
    folder.mkdir(parents=True, exist_ok=True)
    links = "".join(f'<link rel="stylesheet" href="{url}"/>' for url in THEME_CDN)
    (folder / "index.html").write_text(f"<html><head>{links}</head><body>{body}</body></html>", encoding="utf-8")
    (folder / "build").mkdir(exist_ok=True)
    (folder / "build" / "root.js").write_text(f'const links = [{{ href: "{THEME_CDN[0]}" }}];', encoding="utf-8")
    return folder


def test_the_theme_cdn_addresses_are_read_as_npm_packages():
    found = assets.cdn_assets(" ".join(THEME_CDN) + " " + THEME_CDN[0])
    assert [(a.package, a.version, a.path) for a in found] == [
        ("katex", "0.15.2", "dist/katex.min.css"),
        ("font-awesome", "4.7.0", "css/font-awesome.css"),
        ("jupyter-matplotlib", "0.11.3", "css/mpl_widget.css"),
    ]
    assert assets.cdn_assets("https://example.org/katex.css https://cdn.jsdelivr.net/npm/katex") == []


@pytest.mark.slow
def test_every_cdn_asset_is_served_from_the_site(tmp_path, monkeypatch):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    site, cache = built_site(tmp_path / "html"), tmp_path / "npm"
    served = assets.localise(site, cache, base_url="/inside-one-generation")
    assert {(a.package, a.version) for a in served} >= {("katex", "0.15.2"), ("font-awesome", "4.7.0")}
    for path in assets.site_files(site):
        text = path.read_text(encoding="utf-8")
        assert "cdn.jsdelivr.net" not in text and "cdnjs.cloudflare.com" not in text, path.name
    page = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="/inside-one-generation/vendor/katex@0.15.2/dist/katex.min.css"' in page
    katex = site / "vendor" / "katex@0.15.2" / "dist"
    assert (katex / "katex.min.css").is_file() and list((katex / "fonts").glob("KaTeX_Main-Regular.woff2"))
    assert (site / "vendor" / "font-awesome@4.7.0" / "fonts" / "fontawesome-webfont.woff2").is_file()
    # a second build takes the packages from the cache: no npm needed
    monkeypatch.setattr(assets.shutil, "which", lambda name: None)
    again = assets.localise(built_site(tmp_path / "again"), cache)
    assert [(a.package, a.version) for a in again] == [(a.package, a.version) for a in served]


def test_without_npm_the_build_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(assets.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="install node and npm"):
        assets.localise(built_site(tmp_path / "html"), tmp_path / "npm")


@pytest.mark.skipif(not assets.CJK_FONT.is_file(), reason="apt-get install fonts-wqy-microhei")
def test_the_cjk_web_font_holds_every_cjk_character_the_site_uses_and_no_other(tmp_path):
    from fontTools.ttLib import TTFont

    site = built_site(tmp_path / "html", body="词元「的」，token ＡＢ <b>中文</b>")
    (site / "page.json").write_text('{"title": "解码"}', encoding="utf-8")
    css = assets.cjk_font(site)
    wanted = set("词元「」，的ＡＢ中文解码")
    assert set((css.parent / "characters.txt").read_text(encoding="utf-8")) == wanted
    font = TTFont(css.parent / "wqy-microhei-subset.woff")
    assert font.flavor == "woff" and {chr(c) for c in font.getBestCmap()} >= wanted
    assert not {chr(c) for c in font.getBestCmap()} & set("token")  # CJK only: Latin stays the theme's
    text = css.read_text(encoding="utf-8")
    assert '@font-face { font-family: "WenQuanYi Micro Hei"' in text and "U+4E00-9FFF" in text
    assert "Apache-2.0" in (css.parent / "LICENSE").read_text(encoding="utf-8")
    assert assets.cjk_font(built_site(tmp_path / "latin", body="tokens only")) is None


def test_the_site_stylesheet_imports_the_cjk_font_and_names_it_in_every_font_list():
    css = (REPO / "myst" / "site.css").read_text(encoding="utf-8")
    rules = css.split("*/")
    assert any(rule.strip().startswith('@import url("vendor/cjk/cjk.css");') for rule in rules)
    for selector in ("html {", "code, kbd, samp, pre {"):
        rule = css.split(selector, 1)[1].split("}", 1)[0]
        assert rule.rstrip().rstrip(";").endswith('"WenQuanYi Micro Hei"'), selector
    shared = (REPO / "labkit" / "reader" / "players" / "_shared.mjs").read_text(encoding="utf-8")
    assert '"WenQuanYi Micro Hei"' in shared.split("export const FONT", 1)[1].split(";", 1)[0]
