"""The static site as mystmd builds it: every page's content JSON (``myst build --site``, offline,
in a copy of the book with its players' bundles written as the published build writes them).

What the theme renders comes from that JSON: no page carries a kernel widget's view (which the
theme shows as an "ipywidgets – a Jupyter kernel connection is required" note), every player
is its page's ``anywidget`` node with its module in the site, every citation links to the
page's own reference list, and the launch button appears only for a named repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from booktools import book, players, publish

REPO = Path(__file__).resolve().parents[1]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the pages whose kernel widgets became players (each must have one in the static book)
FORMER_KERNEL_WIDGETS = (
    "tool-proposal",
    "masks-and-packing",
    "cache-faults",
    "dpo",
    "grpo-and-ppo-clip",
    "speculative-sampling",
    "bandwidth-budget",
)


def copy_of_the_book(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "players")
    shutil.copytree(REPO / "notebooks", dest / "notebooks", ignore=ignore)
    shutil.copytree(REPO / "myst", dest / "myst")
    for name in ("myst.yml", "references.bib"):
        shutil.copy(REPO / name, dest / name)
    return dest


def stub_theme(root: Path) -> None:
    """A stand-in for the book theme (which mystmd downloads): with a local ``template.yml`` of
    that name mystmd also writes the site manifest, ``_build/site/config.json``, offline."""
    folder = root / "_build" / "templates" / "site" / "myst" / "book-theme"
    folder.mkdir(parents=True)
    (folder / "template.yml").write_text(
        "jtex: v1\ntitle: stand-in for the book theme\n"
        "options:\n  - type: string\n    id: logo_text\n  - type: file\n    id: style\n",  # as the book theme's
        encoding="utf-8",
    )


def manifest(root: Path) -> dict:
    return json.loads((root / "_build" / "site" / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The copy of the book, and its page JSON by source location (``notebooks/…/x.ipynb``)."""
    root = copy_of_the_book(tmp_path_factory.mktemp("book"))
    players.pages(root)
    stub_theme(root)
    content, printed = book.site_content(root)
    assert "Built" in printed, printed[-2000:]
    pages = {}
    for path in sorted(content.glob("*.json")):
        page = json.loads(path.read_text(encoding="utf-8"))
        pages[page["location"].lstrip("/")] = page
    return root, pages


@pytest.mark.slow
def test_every_page_of_the_toc_is_built(site):
    root, pages = site
    assert sorted(pages) == sorted(book.toc_files(book.load_config(root)))


@pytest.mark.slow
def test_no_page_carries_a_kernel_widget_view(site):
    _, pages = site
    shown = [
        f"{location}: cell output {node.get('key')}"
        for location, page in pages.items()
        for node in book.mdast_nodes(page["mdast"])
        if node.get("type") == "output" and WIDGET_VIEW in (node.get("jupyter_data") or {}).get("data", {})
    ]
    assert shown == [], "outputs the static book shows as 'a Jupyter kernel connection is required':\n" + "\n".join(
        shown
    )


@pytest.mark.slow
def test_every_player_is_its_page_anywidget_node_with_its_module_in_the_site(site):
    root, pages = site
    found = set()
    for embed in players.embeds(root):
        page = pages[Path(embed.page).with_suffix(".ipynb").as_posix()]
        widgets = [n for n in book.mdast_nodes(page["mdast"]) if n.get("type") == "anywidget"]
        match = [n for n in widgets if n["esm"].endswith(f".{embed.name}.mjs") and n.get("model") == embed.options]
        assert len(match) == 1, (embed.page, embed.name, [n["esm"] for n in widgets])
        module = root / "_build" / "site" / "public" / match[0]["esm"].lstrip("/")
        assert module.read_text(encoding="utf-8") == embed.text, f"{module.name} is not {embed.path.name}"
        found.add(page["slug"])
    assert set(FORMER_KERNEL_WIDGETS) <= found, sorted(set(FORMER_KERNEL_WIDGETS) - found)


@pytest.mark.slow
def test_every_citation_links_to_its_page_reference_list(site):
    root, pages = site
    cited_pages = 0
    for location, page in pages.items():
        url = "/" if page["slug"] == "index" else f"/{page['slug']}"
        listed = page.get("references", {}).get("cite", {}).get("order", [])
        tree = list(book.mdast_nodes(page["mdast"]))
        assert not [n for n in tree if n.get("type") in ("cite", "citeGroup")], f"{location}: a citation links off-site"
        links = [n for n in tree if n.get("type") == "link" and "cite" in (n.get("data") or {})]
        assert all(n["url"] == f"{url}#cite-{n['data']['cite']}" for n in links), location
        groups = [n for n in tree if n.get("type") == "span" and "cite-group" in n.get("class", "")]
        assert all(g["class"] in ("cite-group parenthetical", "cite-group narrative") for g in groups), location
        assert [c for g in groups for c in g["children"]] == links, f"{location}: a citation outside its group"
        source = (root / location).with_suffix(".md").read_text(encoding="utf-8")
        cited = set(book.cited_keys(source))
        assert {n["data"]["cite"] for n in links} == set(listed) == cited, location
        cited_pages += bool(cited)
    assert cited_pages >= 10


@pytest.mark.slow
def test_the_site_carries_its_own_stylesheet(site):
    root, _ = site
    style = manifest(root)["options"]["style"]
    served = root / "_build" / "site" / "public" / style.lstrip("/")
    assert served.read_text(encoding="utf-8") == (REPO / "myst" / "site.css").read_text(encoding="utf-8")


@pytest.mark.slow
def test_without_a_repository_the_book_has_no_launch_button(site):
    root, pages = site
    [project] = manifest(root)["projects"]
    assert "thebe" not in project and "github" not in project, sorted(project)
    for path in (REPO / "myst.yml", REPO / ".github" / "workflows" / "pages.yml"):
        assert "OWNER" not in path.read_text(encoding="utf-8"), f"{path.name} points at a placeholder"


PROBE = "version: 1\nproject:\n  title: Probe\n  toc:\n    - file: page.md\nsite:\n  template: book-theme\n"


@pytest.mark.slow
def test_with_a_repository_the_site_links_to_it_and_opens_it_on_binder(tmp_path):
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / "myst.yml").write_text(publish.publish_config(PROBE, "reader/inside-one-generation"), encoding="utf-8")
    (tmp_path / "page.md").write_text("# Probe\n\nOne page.\n", encoding="utf-8")
    stub_theme(tmp_path)
    content, printed = book.site_content(tmp_path)
    site = manifest(tmp_path)
    [project] = site["projects"]
    assert project["thebe"]["binder"]["repo"] == "reader/inside-one-generation", printed[-2000:]
    assert project["thebe"]["binder"]["url"] == "https://mybinder.org/"
    url = "https://github.com/reader/inside-one-generation"
    assert project["github"] == url
    [action] = site["actions"]
    assert (action["title"], action["url"], action["internal"]) == ("Report an issue", f"{url}/issues/new", False)
    [page] = [json.loads(p.read_text(encoding="utf-8")) for p in content.glob("*.json")]
    assert page["frontmatter"]["edit_url"] == f"{url}/edit/main/page.md", page["frontmatter"]


def test_the_repository_links_are_added_to_the_config_only_with_a_repository():
    text = (REPO / "myst.yml").read_text(encoding="utf-8")
    assert publish.publish_config(text, None) == text
    assert "jupyter" not in yaml.safe_load(text)["project"] and "github" not in yaml.safe_load(text)["project"]
    published = yaml.safe_load(publish.publish_config(text, "reader/inside-one-generation"))
    assert published["project"].pop("jupyter") == {"binder": {"repo": "reader/inside-one-generation"}}
    assert published["project"].pop("github") == "https://github.com/reader/inside-one-generation"
    assert published["site"].pop("actions") == [
        {"title": "Report an issue", "url": "https://github.com/reader/inside-one-generation/issues/new"}
    ]
    assert published == yaml.safe_load(text)
    for bad in ("", "inside-one-generation", "a/b/c", "reader/book name", "reader/book\n", "OWNER"):
        with pytest.raises(ValueError, match="repository must be a GitHub repository as owner/name"):
            publish.publish_config(text, bad)


def test_the_repository_is_the_given_one_else_github_actions_else_the_origin_remote(tmp_path):
    assert publish.repository_of(tmp_path, "reader/book", {"GITHUB_REPOSITORY": "ci/book"}) == "reader/book"
    assert publish.repository_of(tmp_path, None, {"GITHUB_REPOSITORY": "ci/book"}) == "ci/book"
    assert publish.repository_of(tmp_path, None, {}) is None  # not a clone
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert publish.repository_of(tmp_path, None, {}) is None  # no origin
    for remote, expected in [
        ("https://github.com/reader/inside-one-generation.git", "reader/inside-one-generation"),
        ("git@github.com:reader/inside-one-generation.git", "reader/inside-one-generation"),
        ("https://github.com/reader/book", "reader/book"),
        ("https://gitlab.com/reader/book.git", None),
        ("/work/main", None),
    ]:
        subprocess.run(["git", "-C", str(tmp_path), "remote", "remove", "origin"], capture_output=True)
        subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", remote], check=True)
        assert publish.repository_of(tmp_path, None, {}) == expected, remote
    with pytest.raises(ValueError, match="owner/name"):
        publish.repository_of(tmp_path, None, {"GITHUB_REPOSITORY": "not a repository"})


def test_edit_links_point_at_the_page_md(tmp_path):
    url = "https://github.com/reader/book"
    (tmp_path / "page.html").write_text(
        f'<a href="{url}/edit/main/notebooks/07-traces/01-trace-record.ipynb">Edit</a>'
        f'<a href="{url}/blob/main/notebooks/00-preface.ipynb">Source</a>'
        f'<a href="https://github.com/other/book/edit/main/x.ipynb">other</a>',
        encoding="utf-8",
    )
    (tmp_path / "page.json").write_text(json.dumps({"edit_url": f"{url}/edit/main/notebooks/glossary.ipynb"}))
    (tmp_path / "figure.png").write_bytes(b"\x89PNG.ipynb")
    assert publish.edit_source_links(tmp_path, "reader/book") == 2
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert f"{url}/edit/main/notebooks/07-traces/01-trace-record.md" in html
    assert f"{url}/blob/main/notebooks/00-preface.md" in html
    assert "https://github.com/other/book/edit/main/x.ipynb" in html
    assert json.loads((tmp_path / "page.json").read_text())["edit_url"].endswith("notebooks/glossary.md")
    assert publish.edit_source_links(tmp_path, "reader/book") == 0


def test_build_site_writes_the_repository_for_the_build_only(tmp_path, monkeypatch):
    config = tmp_path / "myst.yml"
    config.write_text((REPO / "myst.yml").read_text(encoding="utf-8"), encoding="utf-8")
    original = config.read_text(encoding="utf-8")
    seen = []
    git = subprocess.run

    def myst(args, cwd=None, **kwargs):
        if args[0] != "myst":  # publish.repository_of asks git
            return git(args, cwd=cwd, **kwargs)
        seen.append(yaml.safe_load((Path(cwd) / "myst.yml").read_text(encoding="utf-8"))["project"].get("jupyter"))
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    monkeypatch.setattr(players, "pages", lambda root: [])
    monkeypatch.setattr(book, "myst_executable", lambda: "myst")
    monkeypatch.setattr(book.subprocess, "run", myst)
    assert book.build_site(tmp_path, "reader/inside-one-generation") == 0
    assert book.build_site(tmp_path) == 0  # tmp_path is no clone: no repository known
    monkeypatch.setenv("GITHUB_REPOSITORY", "ci/inside-one-generation")
    assert book.build_site(tmp_path) == 0  # the Pages workflow's own repository, by default
    assert seen == [
        {"binder": {"repo": "reader/inside-one-generation"}},
        None,
        {"binder": {"repo": "ci/inside-one-generation"}},
    ]
    assert config.read_text(encoding="utf-8") == original
    with pytest.raises(ValueError, match="owner/name"):
        book.build_site(tmp_path, "OWNER")
    assert len(seen) == 3 and config.read_text(encoding="utf-8") == original


def test_the_cli_takes_a_repository_for_the_site_only():
    proc = subprocess.run(
        [sys.executable, "-m", "booktools", "build", "--book", str(REPO), "--repository", "reader/book"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "--repository is for build --site" in proc.stderr, proc.stderr
