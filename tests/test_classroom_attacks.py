"""Hostile hand-ins, graded together with an honest classmate in one ``python -m classroom grade`` run.

Each hostile student tries to write, read or signal outside their sandbox (or to hang, starve or crash
the grader); the test checks that nothing outside changed, that nothing secret reached any output,
and that the honest classmate — and every other student — was still graded.
"""

from __future__ import annotations

import csv
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

REPO = Path(__file__).resolve().parents[1]
EXERCISE = "jittered_backoff"
SECRET = f"s3cr3t-{uuid.uuid4().hex}"

ATTACKS = {
    "subinterpreter_shell": "import _xxsubinterpreters as s\ni = s.create()\n"
    "s.run_string(i, 'import os; os.system(\"id > {target}; cat {key} > {target}.key\")')\n",
    "ctypes_by_path": "import glob, importlib.util, os, sys\n"
    "path = glob.glob(os.path.join(sys.base_prefix, 'lib', 'python3*', 'lib-dynload', '_ctypes*.so'))[0]\n"
    "spec = importlib.util.spec_from_file_location('_ctypes', path)\n"
    "sys.modules['_ctypes'] = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(sys.modules['_ctypes'])\n"
    "import ctypes\nctypes.CDLL(None).system(b'touch {target}')\n",
    "sqlite_outside": "import sqlite3\ntry:\n    db = sqlite3.connect('{target}')\n"
    "    db.execute('create table t(x)')\n    db.commit()\nexcept Exception:\n    pass\n"
    "db = sqlite3.connect(':memory:')\ndb.execute('create table t(x)')\ntry:\n"
    "    db.execute(\"VACUUM INTO '{target}.vacuum'\")\nexcept Exception:\n    pass\n",
    "fifo_node_xattr": "import os, stat\nfor make in (lambda: os.mkfifo('{target}'), lambda: os.mkfifo('{out}'),\n"
    "             lambda: os.mknod('{target}.node', stat.S_IFREG | 0o644),\n"
    "             lambda: os.setxattr('{classmate}', 'user.pwned', b'1')):\n"
    "    try:\n        make()\n    except OSError:\n        pass\n",
    "reads_classmate_key_environment": "import glob, os\nseen = []\n"
    "for path in ['{classmate}', '{key}', *glob.glob('/proc/*/environ')]:\n"
    "    try:\n        text = open(path, 'rb').read().decode('latin-1')\n    except OSError as exc:\n"
    "        text = str(exc)\n    secret = [s for s in text.split('\\0') if 'SECRET' in s or 'TOKEN' in s]\n"
    "    seen.append(' '.join(secret) or text[:300])\n"
    "seen.insert(0, ' '.join(f'{k}={v}' for k, v in os.environ.items() if 'SECRET' in k or 'TOKEN' in k))\n"
    "print(seen)\n\n"
    "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    raise ValueError(' '.join(seen))\n",
    "imports_classmate": "from ada import jittered_backoff  # noqa\n",
    "pidfd_kill": "import os, signal\nfor pid in range(1, 4096):\n    if pid == os.getpid():\n        continue\n"
    "    try:\n        signal.pidfd_send_signal(os.pidfd_open(pid), signal.SIGKILL)\n"
    "    except OSError:\n        pass\n",
    "prlimit_grader": "import os, resource\nfor pid in range(1, 4096):\n    if pid == os.getpid():\n        continue\n"
    "    for limit in (resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE):\n        try:\n"
    "            resource.prlimit(pid, limit, (0, 0))\n        except (OSError, ValueError):\n            pass\n",
    "shrunken_pipe": "import fcntl, time\nfor fd in range(3, 30):\n    try:\n        fcntl.fcntl(fd, 1031, 4096)\n"
    "    except OSError:\n        pass\n\ndef jittered_backoff(attempt, base_ms, cap_ms, u):\n    time.sleep(3600)\n",
    "parser_bomb": "x = " + "[" * 10_000 + "]" * 10_000 + "\n",
    "gigabyte_output": "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n",
    "fork_bomb": "import os, time\nn = 0\nfor _ in range(500):\n    try:\n        if os.fork() == 0:\n"
    "            time.sleep(30)\n            os._exit(0)\n        n += 1\n    except OSError:\n        break\n"
    "while True:\n    try:\n        os.fork()\n    except OSError:\n        break\n\n"
    "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    raise ValueError('forked %d' % n)\n",
    "network": "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')\n"
    "except OSError:\n    pass\n",
    "full_disk": "import os\nn = 0\ntry:\n    while True:\n        with open('/scratch/fill%d' % n, 'wb') as f:\n"
    "            f.write(b'x' * ((1 << 20) - 1))\n        n += 1\nexcept OSError:\n    pass\n"
    "for folder in ('/tmp', '/', '/handin', '{outside}'):\n    try:\n"
    "        open(os.path.join(folder, 'fill'), 'wb').write(b'x')\n    except OSError:\n        pass\n",
}
#: attacks placed before the right answer (the hand-in may still pass: the attack failed, the answer is right)
WRAPS_THE_RIGHT_ANSWER = {
    "subinterpreter_shell",
    "ctypes_by_path",
    "sqlite_outside",
    "fifo_node_xattr",
    "pidfd_kill",
    "prlimit_grader",
    "full_disk",
    "network",
}


def _key_file() -> Path:
    from benchmarks.grading import key_file_of

    try:
        return key_file_of(EXERCISE)
    except FileNotFoundError:
        pytest.skip("the answer key is not in this copy")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One run: ada (the key's answer), a spreadsheet-formula name, and every attack."""
    base = tmp_path_factory.mktemp("attacks")
    handins, outside, out = base / "handins", base / "outside", base / "out" / "grades.csv"
    for folder in (handins, outside, out.parent):
        folder.mkdir()
    key = _key_file()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    right = key.read_text(encoding="utf-8")
    (handins / "ada.py").write_text(right)
    (handins / "=HYPERLINK(1+2).py").write_text(right)
    fill = {"key": str(key), "classmate": str(handins / "ada.py"), "out": str(out), "outside": str(outside)}
    fill["port"] = str(listener.getsockname()[1])
    for name, text in ATTACKS.items():
        text = text.replace("{target}", str(outside / name))
        for field, value in fill.items():
            text = text.replace("{" + field + "}", value)
        (handins / f"{name}.py").write_text(text + ("\n" + right if name in WRAPS_THE_RIGHT_ANSWER else ""))
    env = {**os.environ, "CLASSROOM_SECRET": SECRET}
    command = [sys.executable, "-m", "classroom", "grade", str(handins), "--out", str(out), "--exercise", EXERCISE]
    done = subprocess.run(
        [*command, "--timeout", "3", "--workers", "2"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    rows = list(csv.DictReader(out.open(encoding="utf-8"))) if out.is_file() else []
    try:
        reached = listener.accept()[0].recv(100)
    except BlockingIOError:
        reached = b""
    listener.close()
    found = {"done": done, "rows": {r["student"]: r for r in rows}, "base": base, "outside": outside, "key": right}
    return found | {"reached": reached}


def _outputs(base: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (base / "out").rglob("*") if p.is_file())


def test_the_run_ends_and_grades_every_student(graded):
    done = graded["done"]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert set(graded["rows"]) == {"ada", "'=HYPERLINK(1+2)", *ATTACKS}, sorted(graded["rows"])
    assert graded["rows"]["ada"]["status"] == "passed", graded["rows"]["ada"]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_stays_inside_its_sandbox(graded, attack):
    row = graded["rows"][attack]
    assert graded["rows"]["ada"]["status"] == "passed"
    assert not any(p.name.startswith(attack) for p in graded["outside"].iterdir()), sorted(graded["outside"].iterdir())
    assert not (graded["outside"] / "fill").exists()
    if attack not in WRAPS_THE_RIGHT_ANSWER:
        assert row["status"] != "passed", row
    if attack == "parser_bomb":
        assert row["status"] in ("does not parse", "could not check"), row
    if attack == "network":
        assert graded["reached"] == b"", "a hand-in reached the grader's machine over the network"
    if attack == "fork_bomb":  # the processes it could start: the sandbox's limit, not the machine's
        forked = int(row["message"].split("forked ")[1].split()[0])
        assert forked < 32, row


def test_no_secret_and_no_key_reaches_any_output(graded):
    said = _outputs(graded["base"]) + graded["done"].stdout + graded["done"].stderr
    assert SECRET not in said
    key_line = next(line for line in graded["key"].splitlines() if "return" in line and len(line.strip()) > 20)
    assert key_line.strip() not in said
    assert "No such file or directory" in graded["rows"]["reads_classmate_key_environment"]["message"]


def test_a_classmates_file_and_the_grades_file_are_untouched(graded):
    ada = graded["base"] / "handins" / "ada.py"
    assert "user.pwned" not in os.listxattr(ada)
    assert (graded["base"] / "out" / "grades.csv").is_file() and not (graded["base"] / "out" / "grades.csv").is_fifo()


def test_a_student_name_cannot_inject_a_spreadsheet_formula(graded):
    lines = (graded["base"] / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()
    cells = [cell for row in csv.reader(lines) for cell in row]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert graded["rows"]["'=HYPERLINK(1+2)"]["status"] == "passed"


def test_without_bubblewrap_grade_refuses_and_says_what_is_unprotected(tmp_path):
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "ada.py").write_text("x = 1\n")
    command = [sys.executable, "-m", "classroom", "grade", str(tmp_path / "h"), "--out", str(tmp_path / "g.csv")]
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on this PATH
    done = subprocess.run([*command, "--exercise", EXERCISE], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "bwrap is not installed" in done.stderr and "--unsafe-no-sandbox" in done.stderr
    assert not (tmp_path / "g.csv").exists()
    done = subprocess.run(
        [*command, "--exercise", EXERCISE, "--unsafe-no-sandbox"], cwd=REPO, env=env, text=True, capture_output=True
    )
    assert done.returncode == 0 and "can read any file you can" in done.stderr
