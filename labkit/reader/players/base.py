"""The kernel side of every player: one ``anywidget.AnyWidget`` with one synced ``data`` dict, exactly
what the static book's bundle carries, so the module cannot tell the two hosts apart.  ``live`` tells
the module that a kernel listens: it then offers the controls that need a new computation and writes
the reader's choice into ``request``; the kernel re-runs the real computation (the exporter's
``recompute``) and sets ``data`` again."""

import anywidget
import traitlets

from labkit.core import edition
from labkit.reader.players import bundle
from labkit.reader.players.catalog import export, module_of


class Player(anywidget.AnyWidget):
    """Player ``name`` in a live kernel, showing ``data`` (its exporter's output)."""

    data = traitlets.Dict().tag(sync=True)
    live = traitlets.Bool(True).tag(sync=True)
    request = traitlets.Dict().tag(sync=True)
    #: what the kernel said of the last request it could not compute ("" after one it could)
    error = traitlets.Unicode("").tag(sync=True)
    #: the edition's language, which the module's words are in (``labkit.core.edition``)
    lang = traitlets.Unicode("en").tag(sync=True)

    def __init__(self, name: str, data: dict):
        self._name = name
        self._module = module_of(name)
        lang = edition.language()
        self._esm = bundle(name, lang=lang)
        super().__init__(data=data, lang=lang)
        self.observe(self._on_request, names="request")

    def _on_request(self, change) -> None:
        if not change["new"]:
            return
        try:
            data = self.recompute(dict(change["new"]))
        except (ValueError, TypeError) as refused:  # a request the kernel cannot compute: said in the player
            self.error = str(refused)
            return
        self.error = ""
        self.data = data

    def recompute(self, request: dict) -> dict:
        """New data for ``request``: the module's ``recompute`` (none: every state is in the data)."""
        recompute = getattr(self._module, "recompute", None)
        return self.data if recompute is None else {"player": self._name, **recompute(self.data, request)}

    def __repr__(self) -> str:
        # where the widget cannot be drawn (a page not yet run, an untrusted notebook): one clear
        # line, in English in both editions (a page's stored outputs are the same in both)
        title = self.data.get("title", "player")
        return f"{title['en'] if isinstance(title, dict) else title} — run the page to use this player"


def player(name: str, **options) -> Player:
    """The live player ``name`` over its module's ``static_data(**options)`` (a page may pass a run it made)."""
    return Player(name, export(name, **options))
