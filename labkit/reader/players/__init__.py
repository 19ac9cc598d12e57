"""Players: the book's interactive views, drawn in the browser from data computed by the kernels.

A player is an ES module ``<name>.mjs`` in this folder (the anywidget contract ``export default
{ render({ model, el }) }``, its helpers imported from ``_shared.mjs``; ``bundle.bundle`` makes
the one file a host loads) and a Python module holding its exporter (``base`` says what it holds).
The same module runs in JupyterLab (``base.player(name)``, an anywidget), in the static book
(MyST's ``{anywidget} ./players/<page stem>.<name>.mjs``, a bundle carrying the page's data) and
in the browser test harness (``tests/browser/harness/``).  Nothing is drawn in the kernel.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent

#: the registry: player name → the Python module holding its exporter; its ES module is
#: ``<name>.mjs`` in this folder.  Adding a player is its two modules and one line here.
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
