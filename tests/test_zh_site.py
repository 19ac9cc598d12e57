"""Both editions as mystmd builds them offline (content JSON, as `make book-check` does): every page
of each edition links to its counterpart in the other (English at /, Chinese at /zh/, same slugs),
the link is not a link the theme routes inside its own site."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from booktools import book, edition, edition_book, players

REPO = Path(__file__).resolve().parents[1]
LINK = "labkit-edition-link"


def stub_theme(root: Path) -> None:
    """A local stand-in for the book theme (mystmd downloads the real one)."""
    folder = root / "_build" / "templates" / "site" / "myst" / "book-theme"
    folder.mkdir(parents=True)
    (folder / "template.yml").write_text(
        "jtex: v1\ntitle: stand-in\noptions:\n  - type: string\n    id: logo_text\n  - type: file\n    id: style\n",
        encoding="utf-8",
    )


def copy_of_both_editions(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "players", "_build", "my-edits")
    for folder in ("notebooks", "myst", "zh"):
        shutil.copytree(REPO / folder, dest / folder, ignore=ignore)
    for name in ("myst.yml", "references.bib"):
        shutil.copy(REPO / name, dest / name)
    return dest


def edition_links(content: Path) -> dict[str, list[dict]]:
    """Each page's slug → its edition links (link nodes of the plugin's class)."""
    found = {}
    for path in sorted(content.glob("*.json")):
        tree = json.loads(path.read_text(encoding="utf-8"))["mdast"]
        found[path.stem] = [n for n in book.mdast_nodes(tree) if n.get("type") == "link" and n.get("class") == LINK]
    return found


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    if not (REPO / "zh" / "notebooks").is_dir():
        pytest.skip("the Chinese edition has no pages yet (test_zh_pages.py names them)")
    root = copy_of_both_editions(tmp_path_factory.mktemp("both"))
    built = {}
    for lang, folder in (("en", root), ("zh", root / "zh")):
        with edition.language(lang):
            players.pages(folder)
        stub_theme(folder)
        content, printed = book.site_content(folder)
        assert "Built" in printed, printed[-2000:]
        built[lang] = edition_links(content)
    return root, built


@pytest.mark.slow
def test_every_english_page_links_to_its_chinese_page(sites):
    root, built = sites
    assert built["en"], "the English site has no page"
    for slug, links in built["en"].items():
        assert len(links) == 1, f"{slug}: {len(links)} edition links"
        (link,) = links
        assert link["url"].startswith("/zh/") and not link.get("internal"), link
        target = link["url"].removeprefix("/zh/")
        assert target == "" or target in built["zh"], f"{slug} links to {link['url']}, not a page of the zh site"
        assert link["children"][0]["value"] == "中文"


@pytest.mark.slow
def test_every_chinese_page_links_to_its_english_page(sites):
    root, built = sites
    for slug, links in built["zh"].items():
        assert [link["url"] for link in links] in (["/"], [f"/{slug}"]), f"{slug}: {links}"
        assert links[0]["children"][0]["value"] == "English" and not links[0].get("internal")
    index = [slug for slug, links in built["zh"].items() if links[0]["url"] == "/"]
    for slug in set(built["en"]) & set(built["zh"]) - set(index):  # a translated page: not the zh front page
        assert built["en"][slug][0]["url"] == f"/zh/{slug}", slug


@pytest.mark.slow
def test_the_counterpart_url_carries_the_base_url(tmp_path):
    script = (
        "import { counterpart } from './myst/editions.mjs';"
        "const r = process.cwd();"
        "console.log(JSON.stringify([counterpart(r + '/notebooks/11-labs/06-dpo.ipynb', r, '/book/'),"
        " counterpart(r + '/zh/notebooks/11-labs/06-dpo.ipynb', r + '/zh', '/book/zh'),"
        " counterpart(r + '/zh/notebooks/00-preface.ipynb', r + '/zh', '/book/zh')]));"
    )
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    out = subprocess.run([node, "--input-type=module", "-e", script], cwd=REPO, capture_output=True, text=True)
    en, zh, index = json.loads(out.stdout)
    expected = "/book/zh/dpo" if (REPO / "zh" / "notebooks" / "11-labs" / "06-dpo.ipynb").exists() else "/book/zh/"
    assert (en["url"], zh["url"], index["url"]) == (expected, "/book/dpo", "/book/")


def test_the_published_site_puts_the_chinese_edition_under_zh(tmp_path, monkeypatch):
    """`build --site`: the Chinese project is built with BASE_URL + /zh, in Chinese, and placed at
    _build/html/zh/ of the English site (mystmd itself needs the internet for the theme: stubbed)."""
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "myst.yml").write_text("version: 1\n", encoding="utf-8")
    (tmp_path / "zh" / edition.MARKER).write_text("zh\n", encoding="utf-8")
    seen = []

    def build_site(root, repository):
        seen.append((root, repository, os.environ.get("BASE_URL"), os.environ.get("LABKIT_LANG")))
        (root / "_build" / "html").mkdir(parents=True)
        (root / "_build" / "html" / "index.html").write_text("<html lang=zh>", encoding="utf-8")
        return 0

    monkeypatch.setattr(book, "build_site", build_site)
    monkeypatch.setenv("BASE_URL", "/book/")
    monkeypatch.delenv("LABKIT_LANG", raising=False)
    assert edition_book.build_sites(tmp_path, "owner/name") == 0
    assert seen == [(tmp_path / "zh", "owner/name", "/book/zh", "zh")]
    assert (tmp_path / "_build" / "html" / "zh" / "index.html").read_text(encoding="utf-8") == "<html lang=zh>"
    assert os.environ["BASE_URL"] == "/book/" and "LABKIT_LANG" not in os.environ
