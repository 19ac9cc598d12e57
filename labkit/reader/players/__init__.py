"""Players: the book's step-through views, drawn in the browser from data.

Each player is one ES module in this folder (``<name>.mjs``) following the anywidget
front-end contract ``export default { render({ model, el }) }``, with the helpers all players
share imported from ``_shared.mjs``; ``bundle.bundle`` makes the one file a host loads.  The
same module runs in three hosts:

- JupyterLab, through ``anywidget``: the Python classes here (``Player`` subclasses) sync
  one traitlet, ``data``, which the exporters fill from a real run;
- the static book, through MyST's ``{anywidget}`` directive: the page points at a bundle
  carrying the exporter's data (``python -m labkit.devtools.players pages`` writes it beside
  the page, as the book build does);
- the browser test harness (``tests/browser/harness/``), with a JSON model and no Jupyter.

A player draws with SVG (or canvas) from the data; nothing is drawn in the kernel.

    from labkit.reader.players.decode import decode_player
    player = decode_player()          # trace one, token by token
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent

#: player name → (module file, the Python module holding its exporter and widget): ``<name>.mjs``
#: and ``labkit.reader.players.<name>``
PLAYERS = {
    name: (f"{name}.mjs", f"{__name__}.{name}")
    for name in ("decode", "attention", "latents", "scenarios", "divergence")
}


def module_path(name: str) -> Path:
    """The ES module source of player ``name`` (it imports ``_shared.mjs``)."""
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; expected one of {list(PLAYERS)}")
    return FOLDER / PLAYERS[name][0]
