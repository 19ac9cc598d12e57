"""``labkit check``: lists every exercise of the book with its kind and checks a solution
file from the command line, concept-level hint first."""

import re
from pathlib import Path

import pytest

import labkit.check as check
from labkit.check.core import reset_attempts
from labkit.cli import main

WRONG_BACKOFF = """import numpy as np

def jittered_backoff(attempt, base_ms, cap_ms, u):
    return min(cap_ms, base_ms * 2**attempt)  # no jitter: the herd retries in lockstep
"""
SOLUTIONS = Path(__file__).resolve().parents[1] / "answer_key" / "solutions"


@pytest.fixture
def right_backoff():
    """The answer key's file that holds jittered_backoff (read from answer_key/, never copied here: tests/ ships
    to students)."""
    if not (SOLUTIONS / "trace_three.py").is_file():
        pytest.skip("answer_key/ (the answer key) is not in this copy")
    return (SOLUTIONS / "trace_three.py").read_text()


@pytest.fixture(autouse=True)
def fresh_attempts():
    reset_attempts()


def test_check_lists_every_exercise_page_13_included(capsys):
    assert main(["check"]) == 0
    names = re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M)
    assert len(names) == len(check.exercises()) and "growth_exponent" in names


def test_check_page_filters_the_list(capsys):
    assert main(["check", "--page", "13-measuring"]) == 0
    assert re.findall(r"^(\w+)\(", capsys.readouterr().out, flags=re.M) == ["doubling_factor", "growth_exponent"]


def test_check_file_passes_a_right_answer(tmp_path, capsys, right_backoff):
    (tmp_path / "answer.py").write_text(right_backoff)
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 0
    assert capsys.readouterr().out.startswith("✔ jittered_backoff")


def test_check_file_shows_the_concept_first_and_the_hint_with_more(tmp_path, capsys):
    answer = tmp_path / "answer.py"
    answer.write_text(WRONG_BACKOFF)
    assert main(["check", "jittered_backoff", "--file", str(answer)]) == 1
    first = capsys.readouterr().out
    spec = check.exercises()["jittered_backoff"]
    assert first.startswith("✘ jittered_backoff") and spec.idea in first
    assert spec.rule not in first and "--more" in first
    assert main(["check", "jittered_backoff", "--file", str(answer), "--more"]) == 1
    assert spec.rule in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "nope", "--file", "x.py"], "no exercise 'nope'"),
        (["check", "jittered_backoff", "--file", "/nonexistent/answer.py"], "--file must be an existing Python file"),
        (["check", "--file", "x.py"], "name the exercise"),
    ],
)
def test_check_refuses_bad_arguments_by_name(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_check_file_without_the_function_names_what_it_defines(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def my_norm(a, b, c, u):\n    return u\n")
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 2
    assert "defines no function 'jittered_backoff' (it defines: my_norm" in capsys.readouterr().err
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py"), "--function", "my_norm"]) == 1


def test_check_file_that_does_not_parse_says_where(tmp_path, capsys):
    (tmp_path / "answer.py").write_text("def jittered_backoff(a, b, c, u):\n    return (u\n")
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 2
    assert "answer.py does not parse" in capsys.readouterr().err


# ------------------------------------------------------------------ hostile answers
# `labkit check --file` runs the reader's own code as the reader (no sandbox: grading a class's
# hand-ins is `python -m classroom grade`, tests/test_classroom_*.py); what it guarantees is a
# verdict the answer cannot fake and a checker the answer cannot hang.
HOSTILE = {
    "exit_on_load": "import sys\nsys.exit(0)\n",
    "exit_in_call": "import sys\n\ndef jittered_backoff(a, b, c, u):\n    sys.exit(0)\n",
    "os_exit": "import os\n\ndef jittered_backoff(a, b, c, u):\n    os._exit(0)\n",
    "patch_the_checker": (
        "import numpy as np\nimport labkit.check.core as core\n"
        "core.CheckResult.__bool__ = lambda self: True\ncore.CheckResult.passed = True\n"
        "np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None\n\n"
        "def jittered_backoff(a, b, c, u):\n    return 0.0\n"
    ),
    "loop_for_ever": "def jittered_backoff(a, b, c, u):\n    while True:\n        pass\n",
    "print_80_mb": "def jittered_backoff(a, b, c, u):\n"
    "    for _ in range(80):\n        print('x' * (1 << 20))\n    return u\n",
    "garbage_on_the_wire": "import os\nfrom classroom import runner_child as box\n\n"
    "def jittered_backoff(a, b, c, u):\n    os.write(box._WIRE[1], b'\\xff' * 16)\n    return u\n",
    "header_not_an_object": "import os, struct\nfrom classroom import runner_child as box\n\n"
    "def jittered_backoff(a, b, c, u):\n    os.write(box._WIRE[1], struct.pack('!Q', 3) + b'[1]')\n    return u\n",
    "data_as_a_handle": "import numpy as np\nfrom classroom import runner_child as box\n"
    "from classroom.runner_wire import decode, encode, receive, send\n\n"
    "def jittered_backoff(a, b, c, u):\n    blobs = []\n"
    "    target = encode(np.zeros(3), blobs, None)  # its own array, not a handle the checker gave\n"
    "    ask = {'op': 'ask', 'ref': target, 'what': 'getattr', 'args': encode(['tofile'], blobs, None)}\n"
    "    send(box._WIRE[1], ask, blobs)\n"
    "    head, blobs = receive(box._WIRE[0])\n"
    "    decode(head['value'], blobs, box.Remote)({target!r})\n    return u\n",
    "ten_gigabytes": "import numpy as np\n\ndef jittered_backoff(a, b, c, u):\n"
    "    return u + np.ones(10 << 30, np.uint8).sum()\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_answer_never_passes_and_stays_inside_its_limits(kind, tmp_path, capsys):
    import time

    target = tmp_path / "outside" / "written.txt"
    target.parent.mkdir()
    answer = tmp_path / "answer.py"
    answer.write_text(HOSTILE[kind].replace("{target!r}", repr(str(target))))
    start = time.monotonic()
    status = main(["check", "jittered_backoff", "--file", str(answer), "--timeout", "2"])
    took = time.monotonic() - start
    captured = capsys.readouterr()
    assert status in (1, 2), captured.out + captured.err
    assert "✔" not in captured.out
    assert took < 2 + 10, took  # the limit, plus starting the child on a loaded machine
    if status == 2:
        assert "could not check" in captured.err


@pytest.mark.slow
def test_a_loop_is_stopped_at_the_wall_clock_limit(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(HOSTILE["loop_for_ever"])
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py"), "--timeout", "1"]) == 2
    assert "longer than 1 s" in capsys.readouterr().err


def test_the_answers_output_is_capped_and_shown_after_the_verdict(tmp_path, capsys):
    (tmp_path / "answer.py").write_text(HOSTILE["print_80_mb"])
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 1
    captured = capsys.readouterr()
    assert len(captured.err) < 10_000 and "characters in all" in captured.err
    assert captured.out.startswith("✘ jittered_backoff")


def test_the_answer_runs_in_a_scratch_folder_and_may_write_there(tmp_path, capsys, right_backoff):
    (tmp_path / "answer.py").write_text(
        right_backoff + "\n_right = jittered_backoff\n\ndef jittered_backoff(a, b, c, u):\n"
        "    import os\n    open('notes.txt', 'w').write(os.getcwd())\n    return _right(a, b, c, u)\n"
    )
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 0
    assert not (tmp_path / "notes.txt").exists()


def test_the_answer_sees_none_of_the_callers_secrets(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "s3cr3t")
    (tmp_path / "answer.py").write_text(
        "import os\n\ndef jittered_backoff(a, b, c, u):\n"
        "    raise ValueError(os.environ.get('JUPYTERHUB_API_TOKEN', 'none'))\n"
    )
    assert main(["check", "jittered_backoff", "--file", str(tmp_path / "answer.py")]) == 1
    said = capsys.readouterr().out
    assert "ValueError: none" in said and "s3cr3t" not in said


def test_timeout_must_be_a_positive_number_of_seconds(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["check", "jittered_backoff", "--file", "x.py", "--timeout", "-1"])
    assert "--timeout" in capsys.readouterr().err


def test_a_value_answer_is_shipped_as_data_and_its_errors_name_the_line(tmp_path):
    import numpy as np

    from classroom import runner

    (tmp_path / "answer.py").write_text(
        "import numpy as np\n"
        "PREDICTION = {'ids': [3, 1], 'weight': np.float32(0.5), 'rows': np.eye(2), 'pair': (1, 'a')}\n"
        "def broken(x):\n    return 1 / x\n"
    )
    with runner.Runner([tmp_path / "answer.py"]) as box:
        value = box.candidate("PREDICTION")
    assert value["ids"] == [3, 1] and value["pair"] == (1, "a") and type(value["weight"]) is np.float32
    assert np.array_equal(value["rows"], np.eye(2))
    with runner.Runner([tmp_path / "answer.py"]) as box:
        with pytest.raises(ZeroDivisionError, match="line 4 of answer.py"):
            box.candidate("broken")(0)


def test_a_handle_reads_public_attributes_as_the_object_would(tmp_path):
    """Through a handle ``hasattr`` and ``except AttributeError`` work as on the object itself; a private
    name is refused, and so is a change."""
    from types import SimpleNamespace

    from classroom import runner

    (tmp_path / "answer.py").write_text(
        "def probe(obj):\n    try:\n        obj._secret\n"
        "    except AttributeError as exc:\n        refused = str(exc)\n"
        "    try:\n        obj.size = 0\n    except AttributeError as exc:\n        unchanged = str(exc)\n"
        "    return hasattr(obj, 'size'), hasattr(obj, 'nothing'), obj.size, refused, unchanged\n"
    )
    with runner.Runner([tmp_path / "answer.py"]) as box:
        has, lacks, size, refused, unchanged = box.candidate("probe")(SimpleNamespace(size=3, _secret="s3cr3t"))
    assert (has, lacks, size) == (True, False, 3)
    assert "only public attributes, not '_secret'" in refused and "cannot be changed" in unchanged


def test_the_checkers_objects_stay_in_the_parent_and_answer_through_handles(capsys):
    """The answer key's cached_path_agrees is handed the lab decoder and asks it for a cache: the
    decoder and the cache stay here, the child holds handles to them."""
    if not (SOLUTIONS / "labs_i.py").is_file():
        pytest.skip("answer_key/ (the answer key) is not in this copy")
    assert main(["check", "cached_path_agrees", "--file", str(SOLUTIONS / "labs_i.py")]) == 0


def test_the_wire_never_unpickles_and_keeps_types(tmp_path):
    """What the child sends is read with allow_pickle=False: an object array is refused, and the
    values the checkers judge keep their types (tuples, NumPy scalars, int keys)."""
    import io

    import numpy as np

    from classroom.runner_wire import decode, encode

    value = {"t": (1, 2.5, "x", None, True), 3: [np.float32(0.5), np.bool_(True), b"\x00\xff"], "a": np.arange(3)}
    blobs: list[bytes] = []
    back = decode(encode(value, blobs, ref=None), blobs, deref=None)
    assert back["t"] == (1, 2.5, "x", None, True) and back[3][2] == b"\x00\xff"
    assert type(back[3][0]) is np.float32 and type(back[3][1]) is np.bool_ and back["a"].tolist() == [0, 1, 2]
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"code": "run me"}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        decode({"t": "array", "i": 0}, [pickled.getvalue()], deref=None)


def test_reveal_shows_a_predictions_answer_and_refuses_a_graded_one_without_the_key(capsys):
    assert main(["check", "x0_fed_as_epsilon", "--reveal"]) == 0
    assert "revealed — x0_fed_as_epsilon" in capsys.readouterr().out
    from labkit.check.core import without_key

    with without_key():
        assert main(["check", "largest_min_p", "--reveal"]) == 2
    assert "the answer key is not here" in capsys.readouterr().err
