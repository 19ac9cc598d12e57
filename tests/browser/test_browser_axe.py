"""axe-core over every page of the static book and every player (issue 47, item 3): no serious or
critical violation of the WCAG 2 A/AA rules.

The book theme cannot be fetched offline, so each toc page is the content JSON ``myst build --site``
writes, rendered as the theme shows it (``harness/axe/render-page.mjs``: what it leaves out is the
theme's, said there), served from 127.0.0.1 and opened in Chromium with its players drawn.  Each
player is also checked in its static harness at 1280 px and at a 390 px phone.  Every violation,
whatever its impact, is written to ``browser-screenshots/axe/<page>.json``.
"""

from __future__ import annotations

import pytest
from axe_site import REPO, SiteServer, blocking, build_site, check_pages, npm_folder, run_axe, write_report
from player_controls import embed_key
from player_harness import HarnessServer, embeds
from test_browser_players import open_player

from labkit.devtools import book

pytestmark = pytest.mark.browser

REPORTS = REPO / "browser-screenshots" / "axe"
TOC = book.toc_files(book.load_config(REPO))
EMBEDS = embeds()
WIDTHS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def axe_npm():
    return npm_folder()


@pytest.fixture(scope="module")
def page_results(tmp_path_factory, browser, axe_npm):
    """Every toc page checked by axe (side by side, as ``check_pages`` does): toc file → result."""
    site, where = build_site(tmp_path_factory.mktemp("axe"), axe_npm)
    context = browser.new_context(viewport=WIDTHS["1280"], locale="en-US", timezone_id="UTC")
    try:
        with SiteServer(site) as server:
            urls = {toc_file: f"{server.base}/{where[toc_file]}" for toc_file in TOC if toc_file in where}
            yield check_pages(context, urls, axe_npm)
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


@pytest.fixture(scope="module")
def harness():
    with HarnessServer() as server:
        yield server


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize(("page_md", "name"), EMBEDS, ids=[embed_key(p, n) for p, n in EMBEDS])
def test_player_has_no_serious_or_critical_axe_violation(browser, harness, axe_npm, page_md, name, width):
    context = browser.new_context(viewport=WIDTHS[width], locale="en-US", timezone_id="UTC")
    try:
        page, errors = open_player(context, harness, page_md, name)
        violations = run_axe(page, axe_npm)
    finally:
        context.close()
    report = write_report(REPORTS, f"player__{embed_key(page_md, name)}__{width}", violations)
    assert errors == [], f"{name}: console errors: {errors}"
    found = blocking(violations)
    assert found == [], f"{name} at {width} px: serious or critical axe violations ({report}):\n" + "\n".join(found)
