"""The operating system's sandbox for one student's hand-in: bubblewrap (``bwrap``).

Each hand-in runs in its own process tree in new user, pid, network, IPC, UTS and cgroup namespaces
(``--unshare-all``), killed with the grader (``--die-with-parent``), in a session of its own
(``--new-session``: no terminal to push keys into).  It sees a read-only view of only what Python,
NumPy, labkit and the wire need — the Python installation(s), ``labkit/``, ``fixtures/`` and ``classroom/``
(never ``answer_key/``, other hand-ins, the teacher's home or the output folder) — its own files at
``/handin`` (read-only) and one writable place, a size-capped tmpfs at ``/scratch``.  The environment
is empty but for a few fixed variables: bwrap itself is started with that clean environment, since
the sandbox's pid 1 is bwrap and its ``/proc/1/environ`` is readable inside.

Kernel limits are set in the child before ``exec`` (``classroom.runner.set_limits``): CPU seconds,
address space, file size, open files and processes.  ``RLIMIT_NPROC`` does not bind root, so when the
grader runs as root each sandbox also gets a pids cgroup when one can be made (cgroup v1 ``pids`` or
v2).  The wire (``classroom.runner``) is read and written with deadlines on non-blocking pipes.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import time
from contextlib import suppress
from functools import cache
from pathlib import Path

import labkit
from classroom.runner import ROOTS, Runner, set_limits

#: where the hand-in and the scratch folder are, inside
HANDIN, SCRATCH = "/handin", "/scratch"
#: the environment inside the sandbox (and of bwrap itself)
CLEAN_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": SCRATCH,
    "TMPDIR": SCRATCH,
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}
#: the scratch tmpfs's size (a full disk inside is this one filling up)
SCRATCH_BYTES = 64 << 20
#: processes one sandbox may hold (bwrap's own two included)
PROCESSES = 32
_GROUPS = itertools.count()


def python_roots() -> list[str]:
    """The folders the interpreter and its packages live in (outside ``/usr``, bound on their own)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    roots = sorted(os.path.realpath(p) for p in found if p)
    kept = [r for r in roots if not r.startswith("/usr/")]
    return [r for r in kept if not any(r != o and r.startswith(o + "/") for o in kept)]


def kit_folders() -> list[str]:
    """``labkit/``, ``classroom/`` (the child's side of the wire) and the fixtures, at the paths the interpreter
    finds them (nothing else of the book)."""
    from labkit.core.fixtures import fixtures_root

    packages = (Path(labkit.__file__).resolve().parent, Path(__file__).resolve().parent)
    return sorted({*map(str, packages), os.path.realpath(fixtures_root())})


def bwrap_argv(staged: str) -> list[str]:
    """The bubblewrap command line for a hand-in staged (read-only) in the folder ``staged``."""
    argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    argv += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for folder in python_roots() + kit_folders():
        argv += ["--ro-bind", folder, folder]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(SCRATCH_BYTES), "--tmpfs", SCRATCH]
    argv += ["--ro-bind", staged, HANDIN, "--chdir", SCRATCH, "--clearenv"]
    from labkit.core.fixtures import fixtures_root

    for key, value in {**CLEAN_ENV, "LABKIT_FIXTURES": os.path.realpath(fixtures_root())}.items():
        argv += ["--setenv", key, value]
    return [*argv, "--"]


@cache
def pids_cgroups() -> Path | None:
    """A cgroup folder this process may create pids-limited groups in (root only); None when there is none."""
    if os.geteuid() != 0:
        return None
    for base in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        for stale in base.glob("classroom-*"):  # a killed grader's groups (no process is left in them)
            owner = stale.name.removeprefix("classroom-")
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                _remove_base(stale, os.getpid())
        mine = base / f"classroom-{os.getpid()}"
        with suppress(OSError):
            mine.mkdir(exist_ok=True)
            probe = mine / "probe"
            probe.mkdir(exist_ok=True)
            usable = (probe / "pids.max").exists()
            probe.rmdir()
            if usable:
                atexit.register(_remove_base, mine, os.getpid())
                return mine
            mine.rmdir()
    return None


class Sandbox(Runner):
    """``with Sandbox(staged_folder, files, limits, wanted) as box:`` — a :class:`classroom.runner.Runner`
    whose child runs inside bubblewrap; ``files`` are names relative to the staged folder."""

    def __init__(self, staged: str | Path, files: list[str], limits, wanted=()):
        super().__init__([], limits, wanted)
        self.staged = str(staged)
        self.files = [f"{HANDIN}/{name}" for name in files]
        self.group: Path | None = None

    def child_command(self, boot: str, fds: tuple[int, int]) -> dict:
        self.group = _new_group()
        group = self.group

        def before_exec():
            set_limits(self.limits)
            if group is not None:
                (group / "cgroup.procs").write_text(str(os.getpid()))

        argv = [*bwrap_argv(self.staged), sys.executable, "-I", "-B", "-c", boot]
        return {"args": argv, "env": dict(CLEAN_ENV), "cwd": "/", "preexec_fn": before_exec}

    def __exit__(self, *exc) -> None:
        try:
            super().__exit__(*exc)
        finally:
            _remove_group(self.group)


def _remove_base(base: Path, owner: int) -> None:
    """At the grader's exit: its groups (empty by now) and their folder."""
    if os.getpid() != owner:
        return
    with suppress(OSError):
        for group in base.iterdir():
            if group.is_dir():
                _remove_group(group)
        base.rmdir()


def _new_group() -> Path | None:
    base = pids_cgroups()
    if base is None:
        return None
    group = base / f"s{os.getpid()}-{next(_GROUPS)}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(PROCESSES))
    except OSError:
        return None
    return group


def _remove_group(group: Path | None) -> None:
    """Kill whatever is left in the group (nothing, normally: the pid namespace died with bwrap), then remove it."""
    if group is None:
        return
    for _ in range(50):
        with suppress(OSError, ValueError):
            for pid in (group / "cgroup.procs").read_text().split():
                os.kill(int(pid), 9)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # still busy: a process is on its way out
            time.sleep(0.02)


@cache
def unavailable() -> str | None:
    """Why no sandbox can be made here (bwrap missing, user namespaces refused, …); None when one can."""
    if sys.platform != "linux":
        return f"bubblewrap needs Linux; this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    staged = Path(os.path.realpath(__import__("tempfile").mkdtemp(prefix="classroom-probe-")))
    try:
        staged.chmod(0o755)
        check = f"import sys; sys.path[:0] = {ROOTS!r}; import numpy, classroom.runner_child"
        argv = [*bwrap_argv(str(staged)), sys.executable, "-I", "-B", "-c", check]
        done = subprocess.run(argv, env=dict(CLEAN_ENV), capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started ({exc})"
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1][:300]
        return f"bwrap could not start a sandbox here ({said}); user namespaces may be refused on this host"
    return None


#: what is unprotected without the sandbox (``grade --unsafe-no-sandbox`` says it)
UNPROTECTED = (
    "without a sandbox every hand-in runs as you: it can read any file you can (other hand-ins, "
    "answer_key/, your home), write outside its folder, open network connections, signal or "
    "re-limit the grader, and start processes; only the time, memory, output and file-size limits hold"
)
