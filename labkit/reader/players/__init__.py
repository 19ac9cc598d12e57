"""Players: the book's step-through views, drawn in the browser from data.

Each player is one ES module in this folder (``<name>.mjs``) following the anywidget
front-end contract ``export default { render({ model, el }) }``, with the helpers all players
share imported from ``_shared.mjs`` (``bundle.bundle`` makes the one file a host loads), and
one Python module with its exporter ``static_data(**options)`` and its ``Player`` widget.
The same ES module runs in three hosts:

- JupyterLab, through ``anywidget``: the ``Player`` classes sync one traitlet, ``data``,
  which the exporters fill from a real run;
- the static book, through MyST's ``{anywidget}`` directive: the directive's path names the
  player (``./players/<page stem>.<player>.mjs``, a bundle the book build writes beside the
  page carrying ``static_data(**body)``, the body being the directive's small JSON options);
- the browser test harness (``tests/browser/harness/``), with a JSON model and no Jupyter.

A player draws with SVG (or canvas) from the data; nothing is drawn in the kernel.

    from labkit.reader.players.decode import decode_player
    player = decode_player()          # trace one, token by token
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent

#: the registry: player name → the Python module holding its exporter and widget; its ES
#: module is ``<name>.mjs`` in this folder.  Adding a player is its two modules and one line here.
PLAYERS: dict[str, str] = {}


def register(name: str, module: str | None = None) -> None:
    """Register player ``name`` (``module``: default ``labkit.reader.players.<name>``)."""
    PLAYERS[name] = module or f"{__name__}.{name}"


register("decode")
register("attention")
register("latents")
register("scenarios")
register("divergence")
register("fault_modes")
register("dpo_margin")
register("grpo_group")
register("speculative_sampler")
register("bandwidth_calculator")
register("grammar")
register("mask_editor")
