"""Adding a player touches only its own two files and the registry's table (issue 42): in a copy of
labkit, a new player ``probe`` is its ``probe.mjs`` and ``probe.py`` plus its import and its entry in
``labkit/reader/players/catalog.py``; the copy then exports, bundles and serves it as it does the book's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CATALOG = Path("labkit/reader/players/catalog.py")
MODULE = 'import { h, frame } from "./_shared.mjs";\nexport default { render({ model, el }) { el.append(h("p")); } };\n'
EXPORTER = '"""A probe player."""\n\n\ndef static_data(word="plain"):\n    return {"title": "probe", "word": word}\n'
PROBE = """
import json
from labkit.reader.players import bundle
from labkit.reader.players.catalog import PLAYERS, export
from labkit.reader.players.base import player
print(json.dumps([sorted(PLAYERS), export("probe", word="短波"), "import " in bundle("probe"),
                  player("probe").data]))
"""


def add_player(root: Path) -> list[str]:
    """Write player ``probe`` into the labkit at ``root``: its two modules and its catalog lines (returned)."""
    folder = root / "labkit" / "reader" / "players"
    (folder / "probe.mjs").write_text(MODULE, encoding="utf-8")
    (folder / "probe.py").write_text(EXPORTER, encoding="utf-8")
    catalog = (root / CATALOG).read_text(encoding="utf-8")
    added = ["    probe,\n", '    "probe": probe,\n']
    catalog = catalog.replace("    mask_editor,\n", "    mask_editor,\n" + added[0], 1)
    catalog = catalog.replace('    "mask_editor": mask_editor,\n', '    "mask_editor": mask_editor,\n' + added[1], 1)
    (root / CATALOG).write_text(catalog, encoding="utf-8")
    return added


@pytest.mark.slow  # a copy of labkit and a fresh interpreter
def test_a_new_player_is_its_two_files_and_its_catalog_lines(tmp_path):
    shutil.copytree(REPO / "labkit", tmp_path / "labkit", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    before = (tmp_path / CATALOG).read_text(encoding="utf-8").splitlines(keepends=True)
    added = add_player(tmp_path)
    after = (tmp_path / CATALOG).read_text(encoding="utf-8").splitlines(keepends=True)
    assert sorted(set(after) - set(before)) == sorted(added) and len(after) == len(before) + 2
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names, data, imports, live = json.loads(done.stdout.strip().splitlines()[-1])
    assert "probe" in names and data == {"player": "probe", "title": "probe", "word": "短波"}
    assert not imports, "the bundle inlines _shared.mjs: no import left"
    assert live == {"player": "probe", "title": "probe", "word": "plain"}


def test_an_unregistered_player_module_is_no_player(tmp_path):
    """Without its table line a player's files are not a player: the registry names the known ones."""
    from labkit.reader.players.catalog import module_of

    with pytest.raises(ValueError, match="unknown player 'probe'; expected one of"):
        module_of("probe")
