"""The kit installs as a library: a wheel built from this clone, installed into a fresh virtual
environment outside it, runs every command that needs no page from an empty folder and prints
what the editable install prints; its traces are the golden traces byte for byte.

Offline and quick: the wheel is built with the build backend of this environment
(``--no-build-isolation``), installed with ``--no-deps``, and the new environment reads its
dependencies from this one's site-packages through a ``.pth`` placed after its own, so labkit
itself comes from the wheel only.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# Slow tier: out of `make test-fast`, in `make test` (see CONTRIBUTING, test tiers).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "fixtures" / "traces"
#: command → the trace file it writes into the folder it runs in (None: none)
COMMANDS: dict[tuple[str, ...], str | None] = {
    ("trace", "tool"): "trace-tool-001.jsonl",
    ("trace", "text"): "trace-text-001.jsonl",
    ("trace", "diffusion", "--out", "trace-diffusion.jsonl"): "trace-diffusion.jsonl",
    ("labs",): None,
    ("faults",): None,
    ("check",): None,
}
#: trace file written → its golden trace in fixtures/traces/
GOLDEN_OF = {
    "trace-tool-001.jsonl": "tool.jsonl",
    "trace-text-001.jsonl": "text.jsonl",
    "trace-diffusion.jsonl": "diffusion.jsonl",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(REPO)]
    (REPO / "build").mkdir(exist_ok=True)
    # one build at a time: setuptools builds in the clone's build/lib, which two pytest workers would share
    with open(REPO / "build" / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # setuptools copies into build/lib and never removes: a module deleted since must not ship
        shutil.rmtree(REPO / "build" / "lib", ignore_errors=True)
        subprocess.run(build, check=True, capture_output=True, text=True)
    (found,) = out.glob("labkit-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh environment holding labkit from the wheel; its dependencies come from this one."""
    env = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    subprocess.run([*install, "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "zz-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return env


def _environment(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LABKIT_FIXTURES", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def _labkit(bin_dir: Path, folder: Path, *command: str) -> subprocess.CompletedProcess:
    """``labkit COMMAND`` of the environment whose scripts are in ``bin_dir``, run in ``folder``, output captured."""
    return subprocess.run(
        [str(bin_dir / "labkit"), *command], cwd=folder, env=_environment(bin_dir), capture_output=True, text=True
    )


def _run(bin_dir: Path, folder: Path, command: tuple[str, ...]) -> tuple[int, str, dict[str, bytes]]:
    """Run ``labkit COMMAND`` from an empty ``folder``: exit status, output (timings and the
    folder's path masked), and the trace file it wrote."""
    folder.mkdir(parents=True)
    proc = _labkit(bin_dir, folder, *command)
    text = re.sub(r"\d+(\.\d+)? (s|ms)\b", "<time>", proc.stdout.replace(str(folder), "<folder>"))
    name = COMMANDS[command]
    written = {name: (folder / name).read_bytes()} if name and (folder / name).is_file() else {}
    return proc.returncode, text + proc.stderr, written


def test_the_wheel_holds_labkit_and_its_fixtures_and_no_benchmarks(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"labkit"}, top
    # the class's tools and the teacher's key run from the clone, never from a reader's install
    siblings = ("classroom/", "answer_key/", "solutions/", "booktools/", "harness/", "booklab/", "benchmarks/")
    assert not [n for n in names if n.startswith(siblings)]
    stored = {p.relative_to(REPO / "fixtures").as_posix() for p in (REPO / "fixtures").rglob("*") if p.is_file()}
    packaged = {name.removeprefix("labkit/fixtures/") for name in names if name.startswith("labkit/fixtures/")}
    assert stored <= packaged, sorted(stored - packaged)


def test_every_command_without_a_page_runs_from_an_empty_folder_as_in_the_clone(installed, tmp_path):
    where = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "import labkit.core.fixtures as f; print(f.__file__, f.fixtures_root())",
        ],
        cwd=tmp_path,
        env=_environment(installed / "bin"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(REPO) not in where and str(installed) in where, where
    editable = Path(sys.executable).parent
    jobs = [(installed / "bin", "wheel"), (editable, "clone")]
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            (side, command): pool.submit(_run, bin_dir, tmp_path / side / "-".join(command), command)
            for command in COMMANDS
            for bin_dir, side in jobs
        }
        results = {key: future.result() for key, future in futures.items()}
    for command in COMMANDS:
        status, output, written = results["wheel", command]
        assert status == 0, (command, output[-2000:])
        assert (status, output, written) == results["clone", command], command
        for name, data in written.items():
            assert data == (GOLDEN / GOLDEN_OF[name]).read_bytes(), f"{command}: {name} is not the golden trace"
    assert {name for *_, written in results.values() for name in written} == set(GOLDEN_OF)


def test_labkit_lab_from_the_wheel_says_in_one_line_that_it_comes_with_the_clone(installed, tmp_path):
    for command in (["lab"], ["reset", "--all"], ["lab", "--book", str(tmp_path)]):
        proc = _labkit(installed / "bin", tmp_path, *command)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "comes with the book's clone" in lines[0], proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_check_file_from_the_wheel_says_in_one_line_that_its_runner_comes_with_the_clone(installed, tmp_path):
    """``labkit check NAME --file F`` runs the answer with ``classroom/runner.py``, which is not in the wheel."""
    (tmp_path / "answer.py").write_text("def largest_min_p(*args):\n    return 0\n")
    proc = _labkit(installed / "bin", tmp_path, "check", "largest_min_p", "--file", "answer.py")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "comes with the book's clone (classroom/" in lines[0], (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_labkit_fixtures_from_the_wheel_says_in_one_line_that_it_comes_with_the_clone(installed, tmp_path):
    """The recipes are the book's (``booktools/recipes/``, not in the wheel); the clone's run is test_book's."""
    for command in (["fixtures", "build", "--only", "text"], ["fixtures", "check"]):
        proc = _labkit(installed / "bin", tmp_path, *command)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "comes with the book's clone (booktools/" in lines[0], (
            proc.stderr
        )
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not list(tmp_path.iterdir())
