"""The fixture recipes: one module per domain, each with ``build(dest) -> list[str]`` writing its files under
``dest`` (the fixtures root: its folder and its golden traces) and returning their paths relative to it.

``RECIPES`` names each recipe after the fixture folder it writes; ``labkit fixtures build|check [--only …]``
(``booktools/fixtures.py``) runs them with ``booktools.fixture_files``.  labkit never imports this package: a
reader's install has the fixtures, not the maintainer's recipes.
"""

from booktools.recipes import diffusion, text, tools

#: fixture folder → its recipe, in the book's order
RECIPES = {
    "text": text.build,
    "diffusion": diffusion.build,
    "tools": tools.build,
}
