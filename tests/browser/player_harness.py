"""The static harness of the players: a page served from 127.0.0.1 that loads one player's
module with a JSON model exactly as the static book's ``{anywidget}`` directive does.

``HarnessServer`` serves ``harness/index.html``, the module each page's directive names (the
bundle beside the page, ``<page dir>/players/…mjs``, carrying the page's data; the server
writes the bundles first, as the book build does) as ``text/javascript``, and the directive's
JSON body as the model — what the static book loads.
"""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote

from labkit.devtools.players import EMBEDS, REPO, embedded, write_pages

HARNESS = Path(__file__).resolve().parent / "harness"


def embeds() -> list[tuple[str, str]]:
    """(page, player) for every player the static book embeds."""
    return [(page, name) for page, players in EMBEDS.items() for name in players]


def directive(page: str, name: str) -> dict:
    found = embedded(REPO / page).get(name)
    if found is None or found["text"] is None:
        raise AssertionError(f"{page}: no {{anywidget}} module for the {name} player")
    return found


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
                found = directive(page, name.rsplit(".", 1)[0])
                data = found[part] if part == "text" else json.dumps(found[part])
                self._send(data.encode("utf-8"), kind)
                return
        super().do_GET()

    def log_message(self, *args):
        pass


class HarnessServer:
    def __init__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(HARNESS)))
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, page: str, name: str) -> str:
        return (
            f"{self.base}/index.html?esm={quote(f'/module/{page}/{name}.mjs')}"
            f"&model={quote(f'/model/{page}/{name}.json')}"
        )

    def __enter__(self):
        write_pages()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
