"""axe-core over every page of the static book and every player (issue 47, item 3): no serious or
critical violation of the WCAG 2 A/AA rules.

The book theme cannot be fetched offline, so each toc page is the content JSON ``myst build --site``
writes, rendered as the theme shows it (``harness/axe/render-page.mjs``: what it leaves out is the
theme's, said there), served from 127.0.0.1 and opened in Chromium with its players drawn.  Each
player is also checked in its static harness at 1280 px and at a 390 px phone.  Every violation,
whatever its impact, is written to ``browser-screenshots/axe/<page>.json``.

The fixtures are session-wide: the suite orders its tests page by page (conftest), so these tests
run between other modules' and a module-wide fixture would be built again after each of them.
"""

from __future__ import annotations

import pytest
from axe_site import (
    REPO,
    SiteServer,
    axe_result,
    blocking,
    build_site,
    check_pages,
    npm_folder,
    start_axe,
    write_report,
)
from player_controls import embed_key
from player_harness import HarnessServer, embeds
from test_browser_players import open_player

from booktools import book

pytestmark = pytest.mark.browser

REPORTS = REPO / "browser-screenshots" / "axe"
TOC = book.toc_files(book.load_config(REPO))
EMBEDS = embeds()
SIDE_BY_SIDE = 3
WIDTHS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


@pytest.fixture(scope="session")
def axe_npm():
    return npm_folder()


@pytest.fixture(scope="session")
def page_results(tmp_path_factory, browser, axe_npm):
    """Every toc page checked by axe (side by side, as ``check_pages`` does): toc file → result."""
    site, where = build_site(tmp_path_factory.mktemp("axe"), axe_npm)
    context = browser.new_context(viewport=WIDTHS["1280"], locale="en-US", timezone_id="UTC")
    try:
        with SiteServer(site) as server:
            urls = {toc_file: f"{server.base}/{where[toc_file]}" for toc_file in TOC if toc_file in where}
            return check_pages(context, urls, axe_npm, SIDE_BY_SIDE)
    finally:
        context.close()


def report_name(toc_file: str) -> str:
    return toc_file.removeprefix("notebooks/").removesuffix(".ipynb").replace("/", "__")


@pytest.mark.parametrize("toc_file", TOC, ids=[report_name(f) for f in TOC])
def test_page_has_no_serious_or_critical_axe_violation(page_results, toc_file):
    assert toc_file in page_results, f"{toc_file}: mystmd wrote no content JSON for it"
    result = page_results[toc_file]
    report = write_report(REPORTS, report_name(toc_file), result["violations"])
    assert result["errors"] == [], f"{toc_file}: a player or script failed: {result['errors']}"
    found = blocking(result["violations"])
    assert found == [], f"{toc_file}: serious or critical axe violations ({report}):\n" + "\n".join(found)


@pytest.fixture(scope="session")
def player_results(browser, axe_npm):
    """Every player in its static harness checked by axe at each width (three side by side):
    (page, player, width) → {"violations": [...], "errors": [console errors]}."""
    results = {}
    with HarnessServer() as harness:
        for width, viewport in WIDTHS.items():
            context = browser.new_context(viewport=viewport, locale="en-US", timezone_id="UTC")
            try:
                for start in range(0, len(EMBEDS), SIDE_BY_SIDE):
                    opened = [
                        (embed, *open_player(context, harness, *embed))
                        for embed in EMBEDS[start : start + SIDE_BY_SIDE]
                    ]
                    for _, page, _ in opened:
                        start_axe(page, axe_npm)
                    for (page_md, name), page, errors in opened:
                        results[page_md, name, width] = {"violations": axe_result(page), "errors": errors}
                        page.close()
            finally:
                context.close()
    return results


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=[embed_key(p, n) for p, n in EMBEDS])
def test_player_has_no_serious_or_critical_axe_violation(player_results, page_md, name, width):
    result = player_results[page_md, name, width]
    report = write_report(REPORTS, f"player__{embed_key(page_md, name)}__{width}", result["violations"])
    assert result["errors"] == [], f"{name}: console errors: {result['errors']}"
    found = blocking(result["violations"])
    assert found == [], f"{name} at {width} px: serious or critical axe violations ({report}):\n" + "\n".join(found)


def _output(data: dict, kind: str = "display_data") -> dict:
    return {"type": "output", "jupyter_data": {"output_type": kind, "data": data}, "children": []}


#: one page with every kind of node the renderer draws its own way
CONTENT = {
    "slug": "sample",
    "location": "/notebooks/sample.ipynb",
    "frontmatter": {"title": "Sample <page>"},
    "mdast": {
        "type": "root",
        "children": [
            {"type": "heading", "depth": 2, "identifier": "part", "children": [{"type": "text", "value": "Part"}]},
            {"type": "inlineMath", "value": "x^2"},
            {
                "type": "math",
                "value": "y",
                "html": "<span class='katex-display'>Y</span>",
                "enumerator": "3",
                "html_id": "eq-y",
            },
            {
                "type": "details",
                "children": [
                    {"type": "summary", "children": [{"type": "text", "value": "More"}]},
                    {"type": "paragraph", "children": [{"type": "text", "value": "inside"}]},
                ],
            },
            {"type": "code", "value": "hidden_source()", "visibility": "hide", "executable": True},
            {
                "type": "outputs",
                "children": [
                    _output({"image/png": {"path": "/fig.png"}, "text/plain": {"content": "a bar chart of 3 bars"}}),
                    _output(
                        {
                            "text/html": {"content": "<table id='t'><tr><td>1</td></tr></table>"},
                            "text/markdown": {"content": "| 1 |"},
                            "text/plain": {"content": "T"},
                        },
                        "execute_result",
                    ),
                    _output({"text/plain": {"content": "plain <text>"}}, "execute_result"),
                    {
                        "type": "output",
                        "jupyter_data": {"output_type": "stream", "name": "stdout", "text": "printed\n"},
                    },
                ],
            },
            {"type": "anywidget", "esm": "/sample.decode.mjs", "model": {}},
        ],
    },
}


def test_render_page_draws_a_page_as_the_theme_does(tmp_path, axe_npm):
    import json
    import subprocess

    page = tmp_path / "sample.json"
    page.write_text(json.dumps(CONTENT), encoding="utf-8")
    render = [str(axe_npm / "render-page.mjs"), str(tmp_path / "out"), str(tmp_path / "public")]
    subprocess.run(["node", *render, str(page)], check=True, capture_output=True, text=True)
    html = (tmp_path / "out" / "sample.html").read_text(encoding="utf-8")
    expected = [
        '<html lang="en">',
        "<title>Sample &lt;page&gt;</title>",
        "<h1>Sample &lt;page&gt;</h1>",
        '<h2 id="part">Part</h2>',
        'class="katex"',  # inline math without mystmd's HTML: KaTeX from npm
        "<span class='katex-display'>Y</span>",
        '<a href="#eq-y" title="Link to this Equation">(3)</a>',
        "<details><summary>More</summary><div><p>inside</p></div></details>",
        "<details><summary>Source</summary>",
        '<img src="/fig.png" alt="a bar chart of 3 bars">',  # the theme's rule: text/plain is the alt
        "<table id='t'>",  # text/html over text/markdown and text/plain
        '<div class="font-mono text-sm whitespace-pre-wrap">plain &lt;text&gt;</div>',
        '<pre class="text-sm font-thin font-system">printed\n</pre>',
        'data-name="outputs-container"',
        '<div role="region" aria-label="decode player"',  # no bundle in the site: a named placeholder
        "https://cdn.jsdelivr.net/npm/katex@0.15.2/dist/katex.min.css",
        '<link rel="stylesheet" href="/site.css">',
    ]
    assert [part for part in expected if part not in html] == [], html[:4000]
    assert html.count("<h1") == 1

    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    broken = subprocess.run(["node", *render, str(tmp_path / "broken.json")], capture_output=True, text=True)
    assert broken.returncode == 2 and "CONTENT.json" in broken.stderr and "broken.json" in broken.stderr, broken.stderr
