"""Grade a generated class of a hundred hand-ins, each in its own sandbox: the wall time against 5 minutes.

    python benchmarks/grading.py                 # 100 hand-ins (what `make bench` runs)
    python benchmarks/grading.py --students 12   # a smaller class

The class (``make_class``) mixes what a teacher gets: right hand-ins (the answer key's files), partly
right ones (half of them), wrong ones (every exercise answered, wrongly), a syntax error, an empty file,
the page templates left unchanged, and hostile ones (a fork bomb, a loop, a flood of output, a file
that reads the key).  The result goes to ``benchmarks/results/grading.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 300.0
#: the kinds of hand-in, in the order a class is dealt them
KINDS = ("right", "partly", "wrong", "right", "syntax", "right", "template", "empty", "hostile", "partly")
HOSTILE = (
    "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "def jittered_backoff(attempt, base_ms, cap_ms, u):\n    while True:\n        pass\n",
    "print('x' * (1 << 30))\n",
    f"KEY = open({str(REPO / 'answer_key' / 'solutions' / 'trace_three.py')!r}).read()\n",
)


def key_files() -> list[Path]:
    """The answer key's solution files (``answer_key/solutions/``)."""
    folder = REPO / "answer_key" / "solutions"
    if not folder.is_dir():
        raise FileNotFoundError("no answer key (answer_key/solutions/): a class cannot be generated")
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def key_file_of(name: str) -> Path:
    """The solution file that defines exercise ``name``'s worked answer."""
    found = [p for p in key_files() if f"def {name}(" in p.read_text(encoding="utf-8")]
    if not found:
        raise FileNotFoundError(f"no solution file of the answer key defines {name}")
    return found[0]


def _wrong(specs: dict) -> str:
    lines = []
    for name, spec in specs.items():
        if spec.is_value:
            lines.append(f"{name} = 0\n")
        else:
            lines.append(f"def {name}({', '.join(spec.signature)}):\n    return 0\n")
    return "\n".join(lines)


def _template(specs: dict) -> str:
    lines = []
    for name, spec in specs.items():
        if spec.is_value:
            lines.append(f"{name} = ...\n")
        else:
            lines.append(f"def {name}({', '.join(spec.signature)}):\n    raise NotImplementedError('your code')\n")
    return "\n".join(lines)


def make_class(dest: Path, count: int, kinds: tuple[str, ...] = KINDS) -> dict[str, str]:
    """Write ``count`` hand-ins into ``dest`` (student → kind); a right one is a folder of the key's files."""
    import labkit.check as check

    specs, keys, dealt = check.exercises(), key_files(), {}
    dest.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        kind, student = kinds[number % len(kinds)], f"s{number:03d}"
        dealt[student] = kind
        if kind in ("right", "partly"):
            chosen = keys if kind == "right" else keys[::2]
            (dest / student).mkdir()
            for path in chosen:
                (dest / student / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
            continue
        text = {
            "wrong": _wrong(specs),
            "template": _template(specs),
            "syntax": "def jittered_backoff(attempt, base_ms, cap_ms, u:\n    return 0\n",
            "empty": "",
            "hostile": HOSTILE[(number // len(kinds)) % len(HOSTILE)],
        }[kind]
        (dest / f"{student}.py").write_text(text, encoding="utf-8")
    return dealt


def grade(handins: Path, out: Path, *extra: str) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``python -m classroom grade`` on ``handins``: (wall seconds, the finished process)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "classroom", "grade", str(handins), "--out", str(out), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started, done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/grading.py", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100, help="hand-ins in the class (default 100)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "grading.json")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 1000:
        parser.error(f"--students must be between 1 and 1000, got {args.students}")
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as folder:
        dealt = make_class(Path(folder) / "handins", args.students)
        seconds, done = grade(Path(folder) / "handins", Path(folder) / "grades.csv")
        rows = (Path(folder) / "grades.csv").read_text(encoding="utf-8").count("\n") - 1 if done.returncode == 0 else 0
    result = {
        "students": args.students,
        "workers": os.cpu_count(),
        "wall_seconds": round(seconds, 1),
        "seconds_per_student": round(seconds / args.students, 2),
        "target_seconds": TARGET_SECONDS * args.students / 100,
        "meets_target": seconds <= TARGET_SECONDS * args.students / 100 and done.returncode == 0,
        "rows": rows,
        "exit_status": done.returncode,
        "kinds": {k: sum(v == k for v in dealt.values()) for k in sorted(set(dealt.values()))},
    }
    print("grading a class (python -m classroom grade, one sandbox per hand-in)")
    for key, value in result.items():
        print(f"  {key:<20} {value}")
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"Result: {args.output}")
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path.insert(0, str(REPO))
    sys.exit(main())
