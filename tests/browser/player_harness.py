"""The static harness of the players: a page served from 127.0.0.1 that loads one player's
module with a JSON model exactly as the static book's ``{anywidget}`` directive does.

``HarnessServer`` serves ``harness/index.html``, the player modules from
``labkit/reader/players/`` (as ``text/javascript``) and each model: the JSON body stored in
the page that embeds the player (``labkit.devtools.players.EMBEDS``), so the harness draws
exactly what the static book draws.
"""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from labkit.devtools.players import EMBEDS, REPO, embedded
from labkit.reader.players import FOLDER

HARNESS = Path(__file__).resolve().parent / "harness"


def embeds() -> list[tuple[str, str]]:
    """(page, player) for every player the static book embeds."""
    return [(page, name) for page, players in EMBEDS.items() for name in players]


def model_body(page: str, name: str) -> dict:
    body = embedded(REPO / page)[name]["body"]
    if body is None:
        raise AssertionError(f"{page}: the {name} player has no JSON model")
    return body


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".js": "text/javascript", ".json": "application/json"}

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        if path.startswith("/players/"):
            return str(FOLDER / Path(path).name)
        return str(HARNESS / Path(path).name)

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path.startswith("/model/"):
            page, _, name = self.path.removeprefix("/model/").rpartition("/")
            data = json.dumps(model_body(page, name.removesuffix(".json"))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
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
        return (f"{self.base}/index.html?esm=/players/{name}.mjs"
                f"&model=/model/{page}/{name}.json")

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
