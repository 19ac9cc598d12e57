"""Each `labkit` command, in a fresh interpreter, imports only the heavy libraries it uses.

matplotlib and ipywidgets belong to the pages; jsonschema only to the commands that validate
what they write or read against a schema (the event envelope); the URI grammars of
``rfc3987_syntax`` to none of them.  The trace kinds are one plain table
(``labkit.trace.kinds``): ``labkit trace KIND`` imports every kind's module, none of them heavy.
"""

import json
import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_imports_only_the_heavy_modules_it_uses(command, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *command.split()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
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


@pytest.mark.parametrize("command", ["labs", "faults", "check", "fixtures"])
def test_a_command_s_help_imports_no_numpy(command, tmp_path):
    """``labkit COMMAND --help`` builds the command's parser only: the work (the labs, NumPy) is imported by
    ``run`` at the CLI's one lazy point."""
    done = subprocess.run(
        [sys.executable, "-c", HELP_PROBE, command, "--help"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], f"labkit {command} --help imported them"
