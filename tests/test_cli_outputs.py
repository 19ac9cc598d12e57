"""Where a command writes is checked before it works, and what it writes lands whole (issue 43:
``--out /dev/full``, a name too long and a link loop raised tracebacks after the work was done; a FIFO
with no reader hung)."""

import errno
import json
import os
import subprocess
import sys

import pytest

from labkit.core.fixtures import write_json

pytestmark = pytest.mark.slow


def _outputs(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    return {
        "a device": ("/dev/full", "expected a regular file"),
        "a FIFO nobody reads": (str(fifo), "expected a regular file"),
        "a link loop": (str(loop), "cannot write the file"),
        "a name too long": (str(tmp_path / ("x" * 300 + ".json")), "cannot write the file"),
        "a folder": (str(tmp_path), "expected a file to write, got a folder"),
    }


def test_every_bad_output_is_refused_by_name_before_any_work(tmp_path):
    for what, (out, said) in _outputs(tmp_path).items():
        done = subprocess.run(
            [sys.executable, "-m", "labkit", "faults", "--output", out], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2 and said in done.stderr, (what, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == "", what


def test_a_report_is_written_whole_or_the_old_one_stays(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    write_json(path, {"v": 1})

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(ValueError, match=r"could not write '.*report\.json': No space left on device"):
        write_json(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left behind
