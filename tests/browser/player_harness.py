"""The static harness of the players: a page served from 127.0.0.1 that loads one player's
module with a JSON model exactly as the static book's ``{anywidget}`` directive does.

``HarnessServer`` serves ``harness/index.html``, the module each page's directive names (the
bundle beside the page, ``<page dir>/players/…mjs``, carrying the page's data; the server
writes the bundles first, as the book build does) as ``text/javascript``, and the directive's
JSON body as the model — what the static book loads.  ``HarnessServer(lang="zh")`` serves the
bundles speaking another edition's language (the bundle's ``const LANG``), the data unchanged.
"""

from __future__ import annotations

import json
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote

from booktools import players
from labkit.core.fixtures import book_root

HARNESS = Path(__file__).resolve().parent / "harness"


def embeds(root: Path | None = None) -> list[tuple[str, str]]:
    """(page, player) for every player the static book embeds."""
    return [(e.page, e.name) for e in players.embeds(root)]


def directive(page: str, name: str, root: Path | None = None) -> dict:
    """What the static book loads for one embed: the bundle's text and the directive's body."""
    found = [e for e in players.embeds(root) if (e.page, e.name) == (page, name)]
    if not found or found[0].text is None:
        raise AssertionError(f"{page}: no {{anywidget}} module for the {name} player")
    return {"text": found[0].text, "body": found[0].options}


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
    }

    def translate_path(self, path: str) -> str:
        return str(HARNESS / Path(path.split("?", 1)[0]).name)

    def _send(self, data: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 (http.server's name)
        path = unquote(self.path.split("?", 1)[0])
        for prefix, part, kind in (("/module/", "text", "text/javascript"), ("/model/", "body", "application/json")):
            if path.startswith(prefix):
                page, _, name = path.removeprefix(prefix).rpartition("/")
                found = directive(page, name.rsplit(".", 1)[0], self.server.root)
                data = found[part] if part == "text" else json.dumps(found[part])
                if part == "text":
                    data = speaking(data, self.server.lang)
                self._send(data.encode("utf-8"), kind)
                return
        super().do_GET()

    def log_message(self, *args):
        pass


LANG_LINE = re.compile(r'^const LANG = "[a-z]+";$', re.M)


def speaking(text: str, lang: str) -> str:
    """A page's bundle ``text`` speaking ``lang`` (its one ``const LANG`` line set), or an error."""
    if len(LANG_LINE.findall(text)) != 1:
        raise AssertionError('the bundle has no one `const LANG = "…";` line')
    return LANG_LINE.sub(f"const LANG = {json.dumps(lang)};", text)


class HarnessServer:
    def __init__(self, root: Path | None = None, lang: str = "en"):
        self.root = book_root(root)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(HARNESS)))
        self.httpd.root = self.root
        self.httpd.lang = lang
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, page: str, name: str) -> str:
        return (
            f"{self.base}/index.html?esm={quote(f'/module/{page}/{name}.mjs')}"
            f"&model={quote(f'/model/{page}/{name}.json')}"
        )

    def __enter__(self):
        players.pages(self.root)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
