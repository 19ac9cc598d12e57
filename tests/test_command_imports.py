"""Each `labkit` command, in a fresh interpreter, imports only the heavy libraries it uses.

matplotlib and ipywidgets belong to the pages; jsonschema only to the commands that validate
what they write or read against a schema (the event envelope); the URI grammars of
``rfc3987_syntax`` to none of them.  The trace kinds are one plain table
(``labkit.trace.kinds``): ``labkit trace KIND`` imports every kind's module, none of them heavy.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # one interpreter per command

HEAVY = ("matplotlib", "ipywidgets", "IPython", "jsonschema", "rfc3987_syntax")
PROBE = """
import contextlib, io, json, sys
from labkit.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
domains = sorted({{".".join(m.split(".")[:2]) for m in sys.modules if m.startswith("labkit.")}})
print(json.dumps([code, [m for m in {heavy!r} if sys.modules.get(m) is not None], domains]))
"""

#: command → the heavy modules it may import (and must: a command that stops validating fails here)
COMMANDS = {
    "trace text": {"jsonschema"},
    "trace diffusion": set(),
    "trace tool": {"jsonschema"},
    "labs": set(),
    "faults": set(),
    "check": set(),
    "fixtures check": {"jsonschema"},
}
#: the commands that come with the book's clone (``BOOK_COMMANDS``) run in it
IN_THE_CLONE = {"fixtures check"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_imports_only_the_heavy_modules_it_uses(command, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *command.split()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT if command in IN_THE_CLONE else tmp_path,
    )
    assert done.returncode == 0, done.stderr
    code, loaded, domains = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0, done.stderr
    assert set(loaded) == COMMANDS[command], f"labkit {command} imported {loaded}"


HELP_PROBE = """
import contextlib, io, json, sys
from labkit.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(json.dumps(sorted(m for m in ("numpy", "labkit.labs.report") if m in sys.modules)))
"""


@pytest.mark.parametrize("command", ["labs", "faults", "check"])
def test_a_command_s_help_imports_no_numpy(command, tmp_path):
    """``labkit COMMAND --help`` builds the command's parser only: the work (the labs, NumPy) is imported by
    ``run`` at the CLI's one lazy point."""
    done = subprocess.run(
        [sys.executable, "-c", HELP_PROBE, command, "--help"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], f"labkit {command} --help imported them"


FIXTURES_HELP_PROBE = """
import contextlib, io, json, sys
from labkit.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    main(["fixtures", "--help"])
loaded = [m for m in ("booktools.recipes", "labkit.trace.kinds") if m in sys.modules]
print(json.dumps(["--only" in out.getvalue(), loaded]))
"""


def test_the_fixtures_help_imports_no_recipe():
    """``labkit fixtures`` comes with the clone: its ``--help`` takes ``booktools/`` from the book's folder (NumPy
    with it, as ``labkit lab`` does), but neither the recipes nor the trace kinds, which ``run`` takes."""
    done = subprocess.run(
        [sys.executable, "-c", FIXTURES_HELP_PROBE], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    helped, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert helped, "labkit fixtures --help printed no help"
    assert loaded == [], f"labkit fixtures --help imported {loaded}"
