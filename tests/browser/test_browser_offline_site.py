"""The static site with every non-local request blocked (issue 47, item 2), in Chromium: a page as
the book theme writes it (the theme's CDN stylesheets and KaTeX's output, CJK tokens in the text and
in a player's shadow root) after the build's ``booktools.assets`` step.  No request leaves
127.0.0.1, no formula shows twice (KaTeX's MathML copy hidden by its own stylesheet, served from the
site) and the CJK text is drawn with the site's web font (never □ on a machine without a CJK font)."""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from booktools import assets

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
THEME_CDN = (
    "https://cdn.jsdelivr.net/npm/katex@0.15.2/dist/katex.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.css",
    "https://cdn.jsdelivr.net/npm/jupyter-matplotlib@0.11.3/css/mpl_widget.css",
)
FORMULA = r"p(x_t \mid x_{<t}) = \operatorname{softmax}(z)_t"
PAGE = """<!doctype html><html><head><meta charset="utf-8">{links}<link rel="stylesheet" href="/site.css">
</head><body>
<p id="formula">{formula}</p><p id="tokens">词元 解码 token</p><div id="player"></div>
<script>
const root = document.getElementById("player").attachShadow({{ mode: "open" }});
const font = 'system-ui, sans-serif, &quot;WenQuanYi Micro Hei&quot;';  // the players' list ends so
root.innerHTML = `<span style="font-family: ${{font}}">第一个 token</span>`;
</script></body></html>"""
MEASURE = """async () => {
  await document.fonts.ready;
  const mathml = document.querySelector("#formula .katex-mathml").getBoundingClientRect();
  const html = document.querySelector("#formula .katex-html").getBoundingClientRect();
  const faces = [...document.fonts].filter((f) => f.family.replace(/"/g, "") === "WenQuanYi Micro Hei");
  return {
    mathml: [mathml.width, mathml.height], html: [html.width, html.height],
    katexFont: document.fonts.check('16px KaTeX_Main', 'x'),
    cjkFaces: faces.map((f) => f.status),
  };
}"""


@pytest.fixture
def offline_site(tmp_path):
    site = tmp_path / "html"
    site.mkdir()
    links = "".join(f'<link rel="stylesheet" href="{url}">' for url in THEME_CDN)
    # the formula as the theme's server rendering writes it: KaTeX's HTML and its MathML copy
    katex, _ = assets.npm_package("katex", "0.15.2", REPO / "build" / "npm")
    script = f"process.stdout.write(require({str(katex / 'dist' / 'katex.js')!r}).renderToString(process.argv[1]))"
    formula = subprocess.run(["node", "-e", script, FORMULA], capture_output=True, text=True, check=True).stdout
    (site / "index.html").write_text(PAGE.format(links=links, formula=formula), encoding="utf-8")
    shutil.copy(REPO / "myst" / "site.css", site / "site.css")  # mystmd serves it from the site's root
    assets.localise(site, REPO / "build" / "npm")
    if not assets.CJK_FONT.is_file():
        pytest.fail("the CJK web font is made from Debian's fonts-wqy-microhei: apt-get install fonts-wqy-microhei")
    assets.cjk_font(site)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_with_every_non_local_request_blocked_math_is_single_and_cjk_has_its_font(browser, offline_site):
    context = browser.new_context()
    blocked = []

    def route(r):
        if r.request.url.startswith("http://127.0.0.1"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    try:
        page.goto(offline_site + "/index.html", wait_until="load")
        seen = page.evaluate(MEASURE)
    finally:
        context.close()
    assert blocked == [], f"the site still asks the internet for {blocked}"
    assert seen["mathml"][0] <= 1 and seen["mathml"][1] <= 1, f"the formula shows twice: {seen}"
    assert seen["html"][0] > 50 and seen["katexFont"], seen
    assert "loaded" in seen["cjkFaces"], f"the CJK text is not drawn with the site's font: {seen}"
